/**
 * Redis Cluster's key -> hash slot function (CRC16/XMODEM of the hash tag, mod 16384),
 * computed locally so shard tags can be spread over the slot space without asking a
 * server, and so tests can check that the keys of one script share a slot.
 */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

export function crc16(data: string): number {
  let crc = 0;
  for (const byte of Buffer.from(data, 'utf8')) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc;
}

/** The slot of `key`: only the part inside the first non-empty `{...}` counts, as in Redis. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % 16384;
  }
  return crc16(key) % 16384;
}
