// cluster-key-slot ships no types: the one function delayq uses (the Redis Cluster slot of a key).
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
