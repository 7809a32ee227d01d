/**
 * An xlsx written as a stream (ADR 0006): each sheet's SpreadsheetML is made row by row as text and
 * deflated by yazl's zip writer (zlib, in the thread pool) into the output, beside the thread that makes
 * it. A workbook has one sheet (the exports) or several, written one after the other (the Audit Report).
 * The parts are those ExcelJS's streaming writer makes (no shared strings), so a file reads the same in
 * Excel, LibreOffice, ExcelJS and the console; what ExcelJS adds per cell (a Cell object, its model and an
 * XML stream of its own for each row) is what made a million-row export slower than the target allowed
 * (docs/performance.md). The cells: numbers as numbers, date-times as date cells (a serial
 * day number with the `yyyy-mm-dd hh:mm:ss` format), text as inline string cells (`t="inlineStr"`), which
 * a spreadsheet shows as typed and never evaluates, so text starting with `=` needs no leading apostrophe
 * (CSV files, which have no cell types, keep it); empty cells are left out.
 */
import type { Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { ZipFile } from 'yazl';

/**
 * A date-time cell: the wall clock it shows (in the time zone the file is for), as the epoch milliseconds
 * of a UTC date with those fields (`wallClockIn` of the contract makes them).
 */
export interface XlsxDateTime {
  readonly wallClock: number;
}

export type XlsxCell = string | number | XlsxDateTime | null;

/** The index in cellXfs of the date-time format (`yyyy-mm-dd hh:mm:ss`, numFmt 164). */
const DATE_TIME_STYLE = 1;
/** Days from Excel's day 0 (1899-12-30, in its 1900 date system) to 1970-01-01. */
const EXCEL_EPOCH_DAYS = 25_569;

/** The serial day number of a wall-clock time (whole seconds), as Excel stores date-times. */
export function excelSerial(wallClock: number): number {
  return Math.floor(wallClock / 1000) / 86_400 + EXCEL_EPOCH_DAYS;
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';

/** 1 … count. Sheet n is the part `xl/worksheets/sheet{n}.xml`, relationship `rId{n + 1}`. */
const sheetNumbers = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

const contentTypes = (sheets: number) =>
  `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>${sheetNumbers(
    sheets,
  )
    .map(
      (n) =>
        `<Override PartName="/xl/worksheets/sheet${n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
    )
    .join(
      '',
    )}<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/><Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>`;

const ROOT_RELS = `${XML_HEAD}<Relationships xmlns="${PACKAGE_REL_NS}"><Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/><Relationship Id="rId3" Type="${REL_NS}/extended-properties" Target="docProps/app.xml"/></Relationships>`;

const workbookRels = (sheets: number) =>
  `${XML_HEAD}<Relationships xmlns="${PACKAGE_REL_NS}"><Relationship Id="rId1" Type="${REL_NS}/styles" Target="styles.xml"/>${sheetNumbers(
    sheets,
  )
    .map(
      (n) => `<Relationship Id="rId${n + 1}" Type="${REL_NS}/worksheet" Target="worksheets/sheet${n}.xml"/>`,
    )
    .join('')}</Relationships>`;

/**
 * ExcelJS's default style sheet (one font, the two required fills, one border) with two cell formats: the
 * default one, and the date-time one (DATE_TIME_STYLE).
 */
const STYLES = `${XML_HEAD}<styleSheet xmlns="${MAIN_NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts><fonts count="1"><font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles><dxfs count="0"/><tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/></styleSheet>`;

const SHEET_HEAD = `${XML_HEAD}<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheetFormatPr defaultRowHeight="15"/><sheetData>`;
const SHEET_TAIL =
  '</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>';

/** Characters XML 1.0 cannot carry (dropped, as ExcelJS drops them) and the five it escapes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters XML 1.0 cannot carry
const NEEDS_ESCAPE = /[<>&'"\x7F\x00-\x08\x0B\x0C\x0E-\x1F]/;
const ESCAPES: Record<string, string> = {
  '<': '&lt;',
  '>': '&gt;',
  '&': '&amp;',
  "'": '&apos;',
  '"': '&quot;',
};

export function xmlText(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: as above
  return text.replace(/[<>&'"\x7F\x00-\x08\x0B\x0C\x0E-\x1F]/g, (c) => ESCAPES[c] ?? '');
}

/** A sheet name Excel accepts: at most 31 characters, none of \ / ? * [ ] : */
export function sheetName(name: string): string {
  return name.replace(/[\\/?*[\]:]/g, '-').slice(0, 31) || 'Sheet1';
}

/** Column letters of the first `count` columns: A … Z, AA … */
function columnLetters(count: number): string[] {
  return Array.from({ length: count }, (_, index) => {
    let n = index + 1;
    let letters = '';
    while (n > 0) {
      const rest = (n - 1) % 26;
      letters = String.fromCharCode(65 + rest) + letters;
      n = Math.floor((n - 1) / 26);
    }
    return letters;
  });
}

/** Text that starts or ends with white space (which an XML reader drops unless told to keep it). */
const EDGE_SPACE = /^\s|\s$/;

/** Text gathered before it goes to the compressor (one write per this many characters). */
const WRITE_CHARS = 64 * 1024;

export interface XlsxWriter {
  /** Adds a row to the current sheet (the first one is its header); resolves at once unless the output needs to drain. */
  addRow(cells: readonly XlsxCell[]): Promise<void> | undefined;
  /** Ends the current sheet; the next rows go to the next sheet of `names`. */
  nextSheet(): Promise<void>;
  /** Ends the sheets (one not reached stays empty) and the zip; resolves when the whole file has been handed to `output`. */
  finish(): Promise<void>;
}

/**
 * Writes a workbook with one sheet per name of `names` (one name: a one-sheet file) into `output`. The
 * text of the rows is deflated in zlib's thread pool while the caller makes the next rows; `addRow`
 * returns a promise only when the compressor or the output is full, so memory stays bounded by the
 * streams' buffers. The sheets are zip entries written one after the other.
 */
export function xlsxWriter(
  output: Writable,
  names: string | readonly string[],
  options: { zlibLevel?: number } = {},
): XlsxWriter {
  const titles = (typeof names === 'string' ? [names] : names).map((name) => xmlText(sheetName(name)));
  if (titles.length === 0) throw new Error('A workbook needs a sheet.');
  if (new Set(titles.map((t) => t.toLowerCase())).size !== titles.length)
    throw new Error(`Sheet names must differ: ${titles.join(', ')}`);
  const level = options.zlibLevel ?? 6;
  const zip = new ZipFile();
  const entry = { compressionLevel: level };
  const add = (text: string, name: string) => zip.addBuffer(Buffer.from(text, 'utf8'), name, entry);
  zip.on('error', (error: Error) => output.destroy(error));
  zip.outputStream.pipe(output);
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  add(contentTypes(titles.length), '[Content_Types].xml');
  add(ROOT_RELS, '_rels/.rels');
  add(
    `${XML_HEAD}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Lendlock</Application><HeadingPairs><vt:vector size="2" baseType="variant"><vt:variant><vt:lpstr>Worksheets</vt:lpstr></vt:variant><vt:variant><vt:i4>${titles.length}</vt:i4></vt:variant></vt:vector></HeadingPairs><TitlesOfParts><vt:vector size="${titles.length}" baseType="lpstr">${titles.map((t) => `<vt:lpstr>${t}</vt:lpstr>`).join('')}</vt:vector></TitlesOfParts></Properties>`,
    'docProps/app.xml',
  );
  add(
    `${XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>Lendlock</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">${now}</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">${now}</dcterms:modified></cp:coreProperties>`,
    'docProps/core.xml',
  );
  add(
    `${XML_HEAD}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><workbookPr/><sheets>${titles
      .map((t, i) => `<sheet name="${t}" sheetId="${i + 1}" r:id="rId${i + 2}"/>`)
      .join('')}</sheets></workbook>`,
    'xl/workbook.xml',
  );
  add(workbookRels(titles.length), 'xl/_rels/workbook.xml.rels');
  add(STYLES, 'xl/styles.xml');

  // Each sheet is a stream the zip deflates when its turn comes (entries are written in order).
  const sheets = titles.map((_, i) => {
    const sheet = new PassThrough({ highWaterMark: 256 * 1024 });
    zip.addReadStream(sheet, `xl/worksheets/sheet${i + 1}.xml`, entry);
    return sheet;
  });
  zip.end();
  const closed = new Promise<void>((resolve, reject) => {
    output.once('finish', resolve);
    output.once('close', resolve);
    output.once('error', reject);
    zip.once('error', reject);
  });
  // Seen by `finish`; an export that stops early (its client went away) never asks.
  closed.catch(() => {});

  let current = 0;
  let letters: string[] = [];
  let rowNumber = 0;
  let pending = SHEET_HEAD;

  const drain = (): Promise<void> | undefined => {
    const text = pending;
    pending = '';
    const sheet = sheets[current] as PassThrough;
    if (sheet.write(text)) return undefined;
    if (output.destroyed) return Promise.resolve();
    // Until the compressor has taken the text in, or the output is gone (its client went away).
    return new Promise((resolve) => {
      const done = () => {
        sheet.off('drain', done);
        output.off('close', done);
        resolve();
      };
      sheet.once('drain', done);
      output.once('close', done);
    });
  };

  /** Writes the current sheet's tail and ends its stream. */
  const endSheet = async () => {
    pending += SHEET_TAIL;
    await drain();
    (sheets[current] as PassThrough).end();
  };

  return {
    addRow(cells) {
      rowNumber++;
      if (cells.length > letters.length) letters = columnLetters(cells.length);
      let xml = `<row r="${rowNumber}">`;
      for (let i = 0; i < cells.length; i++) {
        const value = cells[i];
        if (value === null || value === undefined) continue;
        if (typeof value === 'number' && Number.isFinite(value)) {
          xml += `<c r="${letters[i]}${rowNumber}"><v>${value}</v></c>`;
        } else if (typeof value === 'object') {
          xml += `<c r="${letters[i]}${rowNumber}" s="${DATE_TIME_STYLE}"><v>${excelSerial(value.wallClock)}</v></c>`;
        } else {
          const text = String(value);
          // xml:space keeps the spaces a text starts or ends with.
          const t = EDGE_SPACE.test(text) ? '<t xml:space="preserve">' : '<t>';
          xml += `<c r="${letters[i]}${rowNumber}" t="inlineStr"><is>${t}${xmlText(text)}</t></is></c>`;
        }
      }
      pending += `${xml}</row>`;
      return pending.length >= WRITE_CHARS ? drain() : undefined;
    },
    async nextSheet() {
      if (current + 1 >= sheets.length) throw new Error('No sheet after the last one.');
      await endSheet();
      current++;
      rowNumber = 0;
      pending = SHEET_HEAD;
    },
    async finish() {
      await endSheet();
      while (current + 1 < sheets.length) {
        current++;
        pending = SHEET_HEAD;
        await endSheet();
      }
      await closed;
    },
  };
}

/** Writes a small workbook whose rows are all in memory (the Audit Report): one sheet per entry. */
export async function writeXlsx(
  output: Writable,
  sheets: readonly { name: string; rows: readonly (readonly XlsxCell[])[] }[],
  options: { zlibLevel?: number } = {},
): Promise<void> {
  const writer = xlsxWriter(
    output,
    sheets.map((sheet) => sheet.name),
    options,
  );
  for (const [index, sheet] of sheets.entries()) {
    if (index > 0) await writer.nextSheet();
    for (const row of sheet.rows) {
      const full = writer.addRow(row);
      if (full) await full;
    }
  }
  await writer.finish();
}
