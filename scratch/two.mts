import * as s from '../test/fixtures/scans.ts';
import { ExtractionPool } from '../plugins/ingestion/extraction-pool.ts';
import { resolveOcrLanguages } from '../native/ocr/index.ts';
const pool = new ExtractionPool({ workers: 1 });
const f = await s.writeFixture('/tmp/ocrp', 'two.png', s.twoColumnImage(s.LEFT_COLUMN, s.RIGHT_COLUMN));
const d = await pool.extract(f, 'png', { tablesEnabled: false, ocrEnabled: true, ocrLanguages: resolveOcrLanguages(['eng'], '/tmp/x') });
console.log(JSON.stringify(d.sections[0].text));
await pool.close();
