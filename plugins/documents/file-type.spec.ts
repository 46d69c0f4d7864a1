import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fixtures from '../../test/fixtures/documents.js';
import { detectFileType, detectFileTypeOfFile, type FileType, TIER_FOR_TYPE } from './file-type.js';

let dir: string;
const files = {} as Record<'pdf' | 'docx' | 'xlsx' | 'csv' | 'html' | 'md' | 'txt', string>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-file-type-'));
  Object.assign(files, await fixtures.makeOneOfEachType(dir));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('detectFileType', () => {
  it('detects every fixture from its content', async () => {
    const expected: Record<string, FileType> = { pdf: 'pdf', docx: 'docx', xlsx: 'xlsx', csv: 'csv', html: 'html', md: 'md', txt: 'txt' };
    for (const [key, type] of Object.entries(expected)) {
      expect((await detectFileTypeOfFile(files[key as keyof typeof files]))?.fileType, key).toBe(type);
    }
    expect(await detectFileTypeOfFile(files.docx)).toEqual({
      fileType: 'docx',
      mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
  });

  it('trusts the bytes over the name: a PNG called .pdf is a png, HTML called .txt is html', async () => {
    expect((await detectFileTypeOfFile(await fixtures.makePngNamedPdf(dir)))?.fileType).toBe('png');
    expect((await detectFileType(Buffer.from('<!DOCTYPE html><p>hi</p>'), 'page.txt'))?.fileType).toBe('html');
    expect((await detectFileType(Buffer.from('just words'), 'fake.pdf'))?.fileType).toBe('txt');
    expect((await detectFileType(await readFile(files.pdf), 'report.docx'))?.fileType).toBe('pdf');
  });

  it('refuses binary garbage and unsupported formats', async () => {
    const garbage = Buffer.alloc(4096);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 256;
    expect(await detectFileType(garbage, 'notes.txt')).toBeNull();
    expect(await detectFileType(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), 'archive.gz')).toBeNull();
    expect(await detectFileType(Buffer.alloc(0), 'empty.txt')).toBeNull();
  });

  it('tells a DOCX from an XLSX even when only the first KiBs are given', async () => {
    const docxHead = (await readFile(files.docx)).subarray(0, 2048);
    expect((await detectFileType(docxHead, 'x.bin'))?.fileType).toBe('docx');
    const xlsxHead = (await readFile(files.xlsx)).subarray(0, 2048);
    expect((await detectFileType(xlsxHead, 'x.bin'))?.fileType).toBe('xlsx');
  });

  it('reads Latin-1 text as text', async () => {
    expect((await detectFileType(Buffer.from('Caf\xe9 cr\xe8me br\xfbl\xe9e\n', 'latin1'), 'menu.txt'))?.fileType).toBe('txt');
  });

  it('gates types by tier as the spec says', () => {
    expect(Object.entries(TIER_FOR_TYPE).filter(([, tier]) => tier === 'PRO').map(([type]) => type).sort()).toEqual(['csv', 'html', 'xlsx']);
    for (const type of ['pdf', 'docx', 'txt', 'md'] as const) expect(TIER_FOR_TYPE[type]).toBe('FREE');
  });
});
