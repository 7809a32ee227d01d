/**
 * Builds the audit report's xlsx in the browser with ExcelJS, loaded only when a report is downloaded
 * (it is large: it never reaches the other screens' bundles).
 */
export async function buildWorkbook(sheets: readonly { name: string; rows: string[][] }[]): Promise<Blob> {
  const exceljs = await import('exceljs');
  const Workbook = exceljs.Workbook ?? (exceljs as unknown as { default: typeof exceljs }).default.Workbook;
  const workbook = new Workbook();
  workbook.created = new Date();
  for (const sheet of sheets) {
    const worksheet = workbook.addWorksheet(sheet.name);
    worksheet.addRows(sheet.rows);
    worksheet.getRow(1).font = { bold: true };
    sheet.rows[0]?.forEach((_, column) => {
      const longest = Math.max(...sheet.rows.map((row) => (row[column] ?? '').length));
      worksheet.getColumn(column + 1).width = Math.min(40, Math.max(10, longest + 2));
    });
  }
  const buffer = await workbook.xlsx.writeBuffer();
  return new Blob([buffer], { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
}
