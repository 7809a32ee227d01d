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
  showingFirst: (shown: number, total: number) =>
    `Showing the first ${shown} of ${total} invalid rows; incorrect_data.csv lists them all.`,
} as const;
