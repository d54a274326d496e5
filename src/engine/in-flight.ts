/**
 * The store calls in flight, so that close() can wait for them before it closes the store:
 * every part of the engine that calls the store hands the call's promise to `track`.
 */
export class InFlight {
  private readonly calls = new Set<Promise<unknown>>();

  track<T>(call: Promise<T>): Promise<T> {
    this.calls.add(call);
    void call.then(
      () => this.calls.delete(call),
      () => this.calls.delete(call),
    );
    return call;
  }

  /** Resolves once every call tracked so far has settled, however it settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.calls]);
  }
}
