/**
 * The file a process under a kill test writes its facts to (a chaos worker, chaos/worker.ts;
 * the SQLite crash test's child), and the reader its parent tails it with.
 *
 * Why a file and not the child's stdout: Node writes to a pipe synchronously only while
 * the kernel's buffer has room (libuv tries the write at once and queues the rest in the
 * process); a parent that stops reading for a moment (a loaded machine) lets the buffer
 * fill (a few hundred small writes, 20-120 KiB, on the socket pair a 'pipe' stdio is), and
 * the facts written next wait in the child's memory, where its SIGKILL destroys them. A
 * delivery line lost that way, followed by the ack that completed the task, reads as a
 * task never delivered. A write(2) to a regular file that has returned is in the page
 * cache: it outlives the process.
 *
 *   child:   appendFacts(fd, 'S a 100\nS b 200\n')    one write(2) per batch of lines
 *   parent:  tail.poll() -> ['S a 100', 'S b 200']   complete lines only; the line a SIGKILL
 *                                                    cut short never ends, and is never read
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';

/** Opens (creating) a facts file for appending; the fd is the writer's for its whole life. */
export function openFacts(path: string): number {
  return openSync(path, 'a');
}

/** Writes the whole text before returning: a fact written is a fact kept. */
export function appendFacts(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/** Reads a facts file as it grows, complete lines only. */
export class FactsTail {
  private fd: number | null = null;
  private position = 0;
  private partial = '';

  constructor(readonly path: string) {}

  /** The lines completed since the last poll (none while the file does not exist yet). */
  poll(): string[] {
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, 'r');
      } catch {
        return [];
      }
    }
    const size = fstatSync(this.fd).size;
    if (size <= this.position) return [];
    const chunk = Buffer.alloc(size - this.position);
    let read = 0;
    while (read < chunk.length) {
      const n = readSync(this.fd, chunk, read, chunk.length - read, this.position + read);
      if (n === 0) break;
      read += n;
    }
    this.position += read;
    const lines = (this.partial + chunk.subarray(0, read).toString()).split('\n');
    this.partial = lines.pop() ?? '';
    return lines;
  }

  /** The lines still unread; a last line without its newline is dropped (its writer was cut short). */
  close(): string[] {
    const lines = this.poll();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    return lines;
  }
}
