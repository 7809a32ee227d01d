/** Texts of the CSV upload pieces (the spec's own messages come from the contract's MESSAGES). */
export const CSV_LABELS = {
  chooseFile: 'Upload CSV',
  choosePlaceholder: 'Choose a .csv file',
  fileName: 'File',
  fileSize: 'Size',
  readTime: 'Read time',
  rows: 'Rows',
  validRows: 'Valid',
  invalidRows: 'Invalid',
  line: 'Line',
  error: 'Error',
  data: 'Data',
  downloadIncorrect: 'Download incorrect_data.csv',
  /** `listed`: the rows incorrect_data.csv lists (the validator keeps the first 1,000 of `total`). */
  showingFirst: (shown: number, total: number, listed: number) =>
    `Showing the first ${shown} of ${total.toLocaleString('en-US')} invalid rows; incorrect_data.csv lists ${
      listed >= total ? 'them all' : `the first ${listed.toLocaleString('en-US')} and counts the rest`
    }.`,
} as const;
