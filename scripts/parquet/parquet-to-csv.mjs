// Writes one Parquet file as CSV on stdout: every column in the file's order, every row unchanged
// (numbers in JavaScript's shortest round-trip form, empty cells for nulls). Used by
// scripts/convert-op-tables; reads with hyparquet (npm, pure JavaScript), installed by that script.
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const path = process.argv[2];
if (!path) {
  process.stderr.write('usage: node parquet-to-csv.mjs FILE.parquet > FILE.csv\n');
  process.exit(2);
}
const file = await asyncBufferFromFile(path);
const rows = await parquetReadObjects({ file, compressors });
if (rows.length === 0) process.exit(0);
const columns = Object.keys(rows[0]);
const cell = (v) => {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'bigint' ? v.toString() : String(v);
  return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
};
const lines = [columns.join(',')];
for (const r of rows) lines.push(columns.map((c) => cell(r[c])).join(','));
process.stdout.write(lines.join('\n') + '\n');
