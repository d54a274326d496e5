// Preloaded into every test process by scripts/run-tests.ts.
//
// With --test-force-exit, a test file's process exits as soon as its tests are done, and
// its last reports can still be queued on the stdout pipe to the runner: writes to a pipe
// are asynchronous on Linux. Those verdicts were lost and the run still passed with a
// lower count (seen here: 418 of 423 tests reported, the tail of one file; upstream:
// nodejs/node#64833). Blocking writes reach the runner before the process exits.
const handle = (process.stdout as unknown as { _handle?: { setBlocking?: (blocking: boolean) => void } })._handle;
handle?.setBlocking?.(true);
