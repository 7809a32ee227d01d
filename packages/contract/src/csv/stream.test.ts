import { Readable } from 'node:stream';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { CUT_MARK, charactersCut, MAX_RECORD_CHARS, parseCsvRows, RecordSplitter } from './stream';

async function rows(source: Parameters<typeof parseCsvRows>[0], chunkSize?: number) {
  const all: string[][] = [];
  await parseCsvRows(source, (batch) => all.push(...batch.map((row) => [...row])), chunkSize);
  return all;
}

describe('parseCsvRows', () => {
  it('reads what Papa Parse reads of an ordinary file, whatever the chunks', async () => {
    const text = [
      'Sno,IMEI1',
      '1,"356938035643809"',
      '',
      '2,"a ""quoted"" name, with a comma"',
      '3,"two',
      'lines"',
      '4,last',
    ].join('\r\n');
    const expected = Papa.parse<string[]>(text, { delimiter: ',', skipEmptyLines: false }).data;
    expect(await rows(text)).toEqual(expected);
    for (const size of [1, 2, 3, 7, 64])
      expect(await rows(text, size), `chunks of ${size}`).toEqual(expected);
    const bytes = Buffer.from(text);
    const split = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(await rows(Readable.from(split))).toEqual(expected);
    expect(await rows(new Blob([text]))).toEqual(expected);
  });

  it('reads CR, LF and CRLF line ends alike, a CRLF split between chunks included', async () => {
    const expected = [['a', 'b'], ['c', 'd'], [''], ['e', 'f']];
    for (const end of ['\n', '\r', '\r\n']) {
      const text = ['a,b', 'c,d', '', 'e,f'].join(end);
      for (const size of [1, 4, 1000]) expect(await rows(text, size), JSON.stringify(end)).toEqual(expected);
    }
  });

  it('reads quote-free text directly as Papa Parse reads it, a quote later in the file included', async () => {
    const lines = ['\uFEFFsno,name', '1,Asha', '', ',,', '2,Rāvi ₹', ' 3 , x ,', '4'];
    for (const end of ['\n', '\r\n', '\r']) {
      for (const tail of ['', end, `${end}5,"q, r"${end}6,s`]) {
        const text = lines.join(end) + tail;
        const expected = Papa.parse<string[]>(text, { delimiter: ',', skipEmptyLines: false }).data;
        if (tail === end) expected.pop();
        for (const size of [1, 5, 16, 1 << 20])
          expect(await rows(text, size), `${JSON.stringify(end)} ${JSON.stringify(tail)} ${size}`).toEqual(
            expected,
          );
      }
    }
    // Mixed line ends.
    expect(await rows('a,b\r\nc\nd,e\r\n')).toEqual([['a', 'b'], ['c'], ['d', 'e']]);
  });

  it('decodes UTF-8 split between chunks', async () => {
    const bytes = Buffer.from('name\nRāvi ₹1,499\n');
    const split = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
    expect(await rows(Readable.from(split))).toEqual([['name'], ['Rāvi ₹1', '499']]);
  });

  it('cuts a 5 MB line at MAX_RECORD_CHARS, marks how much was left out, and reads on', async () => {
    const huge = '7'.repeat(5_000_000);
    const text = `Sno,IMEI1\n1,${huge}\n2,356938035643809\n`;
    const read = await rows(text);
    expect(read).toHaveLength(3);
    const [sno, field] = read[1] as [string, string];
    expect(sno).toBe('1');
    expect(field.startsWith('7'.repeat(MAX_RECORD_CHARS - 2))).toBe(true);
    expect(field.length).toBeLessThan(MAX_RECORD_CHARS + 20);
    expect(charactersCut(field)).toBe(huge.length + 2 - MAX_RECORD_CHARS);
    expect(read[2]).toEqual(['2', '356938035643809']);
  });

  it('keeps an unclosed quote from swallowing the rest of the file into one row', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `${i},356938035643809`);
    const text = `Sno,IMEI1\n1,"35693803\n${lines.join('\n')}\n`;
    const read = await rows(text, 4096);
    // The quoted field runs to MAX_RECORD_CHARS, is cut and closed; nothing beyond it is kept.
    expect(read).toHaveLength(2);
    expect(charactersCut(read[1]?.[1] ?? '')).toBeGreaterThan(0);
    expect((read[1]?.[1] ?? '').length).toBeLessThan(MAX_RECORD_CHARS + 20);
  });

  it('the splitter closes a quoted field it cuts (the mark counts what it left out, its closing quote too)', () => {
    const splitter = new RecordSplitter();
    const out = splitter.push(`a,"${'x'.repeat(MAX_RECORD_CHARS)}"\nb,c\n`);
    const parsed = Papa.parse<string[]>(out, { delimiter: ',', newline: '\n' }).data;
    expect(parsed[0]?.[0]).toBe('a');
    expect(parsed[0]?.[1]?.endsWith(`${CUT_MARK}4`)).toBe(true);
    expect(parsed[1]).toEqual(['b', 'c']);
  });
});
