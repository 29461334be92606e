const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`, read in one pass over the bytes
 * before anything parses it. `JSON.parse` copes with deep text, but everything that walks the value
 * afterwards recursively (hashing, copying, serialising) overflows the stack at some depth, so the
 * depth is refused at the door. Brackets inside strings do not count; the text need not be valid
 * JSON (the parser still judges that).
 */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth -= 1;
  }
  return false;
}

/** Whether a decoded value nests deeper than `maxDepth`; a loop, not recursion, so any depth is safe to ask about. */
export function valueNestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, above] = next;
    if (!item || typeof item !== 'object') continue;
    if (above >= maxDepth) return true;
    for (const child of Object.values(item)) pending.push([child, above + 1]);
  }
  return false;
}
