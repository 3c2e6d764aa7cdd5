// canon.mjs - the audit chain recomputed the way store/audit.c does it:
//   hash(n) = SHA-256(raw hash(n-1) || canonical JSON of record n without "hash"),
// 32 zero bytes before the first record; canonical = jansson's JSON_COMPACT | JSON_SORT_KEYS.
// Numbers and strings keep their exact source text (jansson prints reals with 17 digits,
// which JSON.parse + JSON.stringify would not reproduce).
import { createHash } from 'node:crypto';

function parse(text) {
  let i = 0;
  const ws = () => { while (/\s/.test(text[i] || '')) i++; };
  function value() {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const members = [];
      ws();
      if (text[i] === '}') { i++; return { obj: members }; }
      for (;;) {
        ws();
        const key = string();
        ws();
        if (text[i++] !== ':') throw new Error(`expected ':' at ${i}`);
        members.push([key, value()]);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== '}') throw new Error(`expected '}' at ${i}`);
        return { obj: members };
      }
    }
    if (c === '[') {
      i++;
      const items = [];
      ws();
      if (text[i] === ']') { i++; return { arr: items }; }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== ']') throw new Error(`expected ']' at ${i}`);
        return { arr: items };
      }
    }
    if (c === '"') return { raw: string().raw };
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
    if (!m) throw new Error(`bad token at ${i}`);
    i += m[1].length;
    return { raw: m[1] };
  }
  function string() {
    const start = i;
    if (text[i++] !== '"') throw new Error(`expected string at ${start}`);
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    const raw = text.slice(start, i);
    return { raw, key: JSON.parse(raw) };
  }
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing text at ${i}`);
  return v;
}

function dump(v) {
  if (v.raw !== undefined) return v.raw;
  if (v.arr) return '[' + v.arr.map(dump).join(',') + ']';
  const sorted = [...v.obj].sort((a, b) =>
    Buffer.compare(Buffer.from(a[0].key, 'utf8'), Buffer.from(b[0].key, 'utf8')));
  return '{' + sorted.map(([k, x]) => k.raw + ':' + dump(x)).join(',') + '}';
}

// The canonical text of one NDJSON line without its top-level "hash", and that hash.
export function canonical(line) {
  const v = parse(line);
  if (!v.obj) throw new Error('record is not an object');
  const hash = v.obj.find(([k]) => k.key === 'hash');
  const rest = { obj: v.obj.filter(([k]) => k.key !== 'hash') };
  return { text: dump(rest), hash: hash ? JSON.parse(hash[1].raw) : null };
}

// Verifies NDJSON text whose first record follows prevHex (64 zeros for seq 1).
// Returns {ok, checked, firstBad, reason}.
export function verifyChain(ndjson, prevHex = '0'.repeat(64)) {
  let prev = Buffer.from(prevHex, 'hex');
  let checked = 0, lastSeq = null;
  for (const line of ndjson.split('\n')) {
    if (!line.trim()) continue;
    const { text, hash } = canonical(line);
    const seq = JSON.parse(line).seq;
    if (lastSeq !== null && seq !== lastSeq + 1)
      return { ok: false, checked, firstBad: seq, reason: `gap before seq ${seq}` };
    const got = createHash('sha256').update(prev).update(text, 'utf8').digest();
    if (got.toString('hex') !== hash)
      return { ok: false, checked, firstBad: seq, reason: `hash mismatch at seq ${seq}` };
    prev = got;
    lastSeq = seq;
    checked++;
  }
  return { ok: checked > 0, checked, firstBad: 0, reason: `${checked} records verify` };
}
