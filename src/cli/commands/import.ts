/**
 * import <file.ndjson>: one task per line ({topic, payload?, delayMs? | runAt?, id?...},
 * the body of POST /v1/tasks), sent in batches. Lines that are not JSON are reported with
 * their number and skipped; the command fails (exit 1) if any task was refused.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { InvalidArgumentError, type Command } from 'commander';
import type { ClientScheduleInput } from '../../client/index.js';
import { contextOf, RequestFailed, UsageError } from '../context.js';
import { ProgressBar } from '../progress.js';

interface ImportOptions {
  batchSize: number;
}

interface Refusal {
  line: number;
  code: string;
  message: string;
}

function batchSizeArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 10_000) throw new InvalidArgumentError('expected an integer from 1 to 10000');
  return n;
}

export function registerImportCommand(program: Command): void {
  program
    .command('import <file>')
    .description('schedule every task of an NDJSON file (one task per line), in batches')
    .option('--batch-size <n>', 'tasks per request', batchSizeArg, 1_000)
    .action(async (file: string, options: ImportOptions, command: Command) => {
      const { client, out } = contextOf(command);
      let size: number;
      try {
        size = statSync(file).size;
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
      }
      const bar = new ProgressBar(`import ${file}`);
      const counts = { created: 0, existing: 0, refused: 0 };
      const refusals: Refusal[] = [];
      let batch: { line: number; task: ClientScheduleInput }[] = [];
      let bytes = 0;
      let lineNo = 0;

      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        const sent = batch;
        batch = [];
        const results = await client.scheduleMany(sent.map((b) => b.task));
        results.forEach((result, i) => {
          if ('error' in result) {
            counts.refused++;
            refusals.push({ line: sent[i]?.line ?? 0, code: result.error.code, message: result.error.message });
          } else if (result.created) counts.created++;
          else counts.existing++;
        });
        bar.update(size === 0 ? 1 : bytes / size, counts.created + counts.existing);
      };

      const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
      for await (const line of lines) {
        lineNo++;
        bytes += Buffer.byteLength(line) + 1;
        if (line.trim().length === 0) continue;
        try {
          batch.push({ line: lineNo, task: JSON.parse(line) as ClientScheduleInput });
        } catch {
          counts.refused++;
          refusals.push({ line: lineNo, code: 'INVALID_JSON', message: 'line is not valid JSON' });
        }
        if (batch.length >= options.batchSize) await flush();
      }
      await flush();
      bar.update(1, counts.created + counts.existing);
      bar.finish();
      out.result({ ...counts, refusals }, () =>
        [
          `${counts.created} scheduled, ${counts.existing} already existed, ${counts.refused} refused`,
          ...refusals.slice(0, 20).map((r) => `  line ${r.line}: ${r.code}: ${r.message}`),
          ...(refusals.length > 20 ? [`  ... and ${refusals.length - 20} more`] : []),
        ].join('\n'),
      );
      if (counts.refused > 0) throw new RequestFailed('IMPORT_INCOMPLETE', `${counts.refused} of ${lineNo} lines were not scheduled`);
    });
}
