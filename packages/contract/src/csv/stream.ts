/**
 * Streams a CSV source through Papa Parse, handing the rows to `onRows` a batch at a time. The source is
 * a File or Blob (browser), a Node readable stream, or the text itself, and a million-row file never
 * sits in memory as parsed rows.
 *
 * Papa Parse keeps an unfinished row whole, and parses it again with every new chunk. A single 90 MB line
 * (or an unclosed quote before 90 MB of rows) took 10 s and a gigabyte of memory. So the text is first
 * cut into whole records here (`RecordSplitter`), and Papa Parse reads whole records only. A record over
 * `MAX_RECORD_CHARS` keeps its first characters and ends with `CUT_MARK` and the count of the
 * characters left out. Such a row is always reported invalid (the mark is no IMEI, amount, date or
 * template), and its error report can still say how long it was.
 */
import type { ParseConfig } from 'papaparse';

/** A Node readable stream (structurally, so the browser build needs no Node types). */
export interface CsvReadable {
  readonly readable: boolean;
  read(...args: never[]): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  [Symbol.asyncIterator](): AsyncIterator<unknown>;
}

export type CsvInput = string | Blob | CsvReadable;

const STRING_CHUNK = 1 << 20;

/** The longest record read as it is: far beyond any valid row of a batch file (about 20 characters). */
export const MAX_RECORD_CHARS = 65_536;
/** Ends a record cut at MAX_RECORD_CHARS, followed by the count of the characters left out. */
export const CUT_MARK = '\uFFFF';
const CUT = /\uFFFF(\d+)$/;

/** The characters a cut record left out, from its last field (0 for a record read whole). */
export function charactersCut(lastField: string): number {
  const match = CUT.exec(lastField);
  return match ? Number(match[1]) : 0;
}

/** Papa Parse is loaded on first use, so it is not part of a bundle that only imports the contract. */
export async function loadPapa() {
  return (await import('papaparse')).default;
}

/** What ends a run of ordinary characters: in an unquoted field, and in a quoted one. */
const UNQUOTED_STOPS = /[,\r\n]/g;
const QUOTED_STOPS = /"/g;

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/** Where the splitter is in a record, as Papa Parse reads one (a quote opens a field only at its start). */
const At = {
  FieldStart: 0,
  Unquoted: 1,
  Quoted: 2,
  /** A quote inside a quoted field: it closes the field, or a second quote follows (an escaped quote). */
  QuoteInQuoted: 3,
} as const;
type At = (typeof At)[keyof typeof At];

/**
 * Cuts text into whole records, each followed by `\n` (CRLF and CR line ends outside quotes become LF;
 * line breaks inside quoted fields stay as they are), keeping at most MAX_RECORD_CHARS of each.
 */
export class RecordSplitter {
  private at: At = At.FieldStart;
  private afterCr = false;
  /** Characters of the current record so far, kept or not. */
  private length = 0;
  /** The kept characters of the current record (not yet complete). */
  private kept = '';
  private cutAt: At | null = null;

  /** Takes the next chunk; returns the records it completed (possibly none), each ending with `\n`. */
  push(chunk: string): string {
    let out = '';
    let start = 0; // the current record's characters in this chunk start here (while not cut)
    // Locals while scanning (a chunk is up to a megabyte of characters), written back at the end.
    let at = this.at;
    let afterCr = this.afterCr;
    let length = this.length;
    let cutAt = this.cutAt;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (afterCr) {
        afterCr = false;
        if (c === LF) {
          start = i + 1; // the LF of a CRLF already ended the record
          continue;
        }
      }
      // Inside a field, jump to the next character that can change the state (natively, not one by one):
      // a 90 MB line is scanned in a blink.
      if ((at === At.Unquoted || at === At.Quoted) && c !== CR && c !== LF && c !== COMMA && c !== QUOTE) {
        const stops = at === At.Quoted ? QUOTED_STOPS : UNQUOTED_STOPS;
        stops.lastIndex = i;
        const next = stops.exec(chunk)?.index ?? chunk.length;
        const run = next - i;
        if (cutAt === null && length + run > MAX_RECORD_CHARS) {
          this.kept += chunk.slice(start, i + (MAX_RECORD_CHARS - length));
          cutAt = at;
        }
        length += run;
        i = next - 1;
        continue;
      }
      const ends = (c === LF || c === CR) && at !== At.Quoted;
      if (ends) {
        if (cutAt === null) this.kept += chunk.slice(start, i);
        out += `${this.finish(cutAt, length)}\n`;
        at = At.FieldStart;
        length = 0;
        cutAt = null;
        afterCr = c === CR;
        start = i + 1;
        continue;
      }
      if (length === MAX_RECORD_CHARS && cutAt === null) {
        this.kept += chunk.slice(start, i);
        cutAt = at;
      }
      length++;
      if (at === At.Quoted) at = c === QUOTE ? At.QuoteInQuoted : At.Quoted;
      else if (at === At.QuoteInQuoted)
        at = c === QUOTE ? At.Quoted : c === COMMA ? At.FieldStart : At.Unquoted;
      else if (c === COMMA) at = At.FieldStart;
      else at = at === At.FieldStart && c === QUOTE ? At.Quoted : At.Unquoted;
    }
    if (cutAt === null) this.kept += chunk.slice(start);
    this.at = at;
    this.afterCr = afterCr;
    this.length = length;
    this.cutAt = cutAt;
    return out;
  }

  /** The last record, if the text did not end with a line break. */
  end(): string {
    return this.length > 0 ? this.finish(this.cutAt, this.length) : '';
  }

  private finish(cutAt: At | null, length: number): string {
    let record = this.kept;
    this.kept = '';
    if (cutAt !== null) {
      const mark = `${CUT_MARK}${length - MAX_RECORD_CHARS}`;
      // Cut inside a quoted field: the mark goes inside it and the field is closed.
      if (cutAt === At.Quoted) record += `${mark}"`;
      else if (cutAt === At.QuoteInQuoted) record += `"${mark}"`;
      else record += mark;
    }
    return record;
  }
}

/** The source as decoded text chunks. */
async function* textChunks(source: CsvInput, chunkSize: number | undefined): AsyncGenerator<string> {
  if (typeof source === 'string') {
    const size = chunkSize ?? STRING_CHUNK;
    for (let i = 0; i < source.length; i += size) yield source.slice(i, i + size);
    return;
  }
  const decoder = new TextDecoder('utf-8');
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    const reader = source.stream().getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield decoder.decode(value, { stream: true });
    }
  } else {
    for await (const chunk of source as CsvReadable) {
      yield typeof chunk === 'string' ? chunk : decoder.decode(chunk as Uint8Array, { stream: true });
    }
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** A CR that is not the start of a CRLF: a line end of its own (handled by the splitter). */
const LONE_CR = /\r(?!\n)/;
/** An LF without a CR before it. */
const BARE_LF = /(?:^|[^\r])\n/;

/**
 * The rows of quote-free text made of whole lines (each ending with LF or CRLF, no lone CR), or null when
 * a line is longer than MAX_RECORD_CHARS (the splitter cuts it). Without quotes a CSV row is its line
 * split at the commas, which is what Papa Parse does with such text; reading it directly spares the
 * splitter's copy of every record and Papa Parse's second pass (a Notify file went 2.4 times slower
 * than an IMEI file of as many rows through both).
 */
function quoteFreeRows(text: string): string[][] | null {
  const crlf = text.indexOf('\r') !== -1;
  const lines = !crlf ? text.split('\n') : BARE_LF.test(text) ? text.split(/\r?\n/) : text.split('\r\n');
  lines.pop(); // the text ends with a line end: nothing follows it
  const rows = new Array<string[]>(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.length > MAX_RECORD_CHARS) return null;
    rows[i] = line.split(',');
  }
  return rows;
}

export async function parseCsvRows(
  source: CsvInput,
  onRows: (rows: readonly (readonly string[])[]) => void,
  chunkSize?: number,
): Promise<void> {
  const Papa = await loadPapa();
  const config: ParseConfig<string[]> = { delimiter: ',', newline: '\n', skipEmptyLines: false };
  const splitter = new RecordSplitter();
  let pending = '';
  const parse = (text: string, complete: boolean) => {
    const rows = Papa.parse<string[]>(text, config).data;
    // Text ending with a line break parses with an empty row after it, which is not in the file.
    if (complete) rows.pop();
    if (rows.length > 0) onRows(rows);
  };
  const split = (text: string) => {
    pending += splitter.push(text);
    if (pending.length >= STRING_CHUNK || (chunkSize !== undefined && pending.length >= chunkSize)) {
      parse(pending, true);
      pending = '';
    }
  };
  // Until the first quote (most files have none), whole lines are read directly (quoteFreeRows); `carry`
  // is the unfinished line. From the first quote on, the splitter and Papa Parse read the rest.
  let direct = true;
  let carry = '';
  let started = false;
  for await (let chunk of textChunks(source, chunkSize)) {
    if (!started && chunk !== '') {
      started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1); // Papa Parse drops a leading BOM too
    }
    if (direct) {
      const text = carry + chunk;
      if (text.indexOf('"') === -1) {
        const end = text.lastIndexOf('\n') + 1;
        const whole = text.slice(0, end);
        const rest = text.slice(end);
        const rows = rest.length <= MAX_RECORD_CHARS && !LONE_CR.test(whole) ? quoteFreeRows(whole) : null;
        if (rows) {
          carry = rest;
          if (rows.length > 0) onRows(rows);
          continue;
        }
      }
      direct = false;
      carry = '';
      chunk = text;
    }
    split(chunk);
  }
  if (direct && carry !== '') {
    // The last line, with no line end after it (a lone CR at its very end is one).
    const line = carry.charCodeAt(carry.length - 1) === CR ? carry.slice(0, -1) : carry;
    if (line.indexOf('\r') === -1 && line.length <= MAX_RECORD_CHARS) onRows([line.split(',')]);
    else split(carry);
  }
  if (pending) parse(pending, true);
  const last = splitter.end();
  if (last) parse(last, false);
}
