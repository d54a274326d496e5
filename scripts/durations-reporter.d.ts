// The types of durations-reporter.js (plain JavaScript: node --test loads it before tsx).
export interface TestEvent {
  readonly type: string;
  readonly data?: { readonly nesting?: number; readonly name?: string; readonly file?: string; readonly details?: { readonly duration_ms?: number } };
}
export default function durationsReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string>;
