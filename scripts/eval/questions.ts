/** The evaluation's question file (JSON lines; never committed): its shape, and reading it. */
import { readFile } from 'node:fs/promises';

export type QuestionSet = 'dev' | 'test';
export type QuestionKind = 'same' | 'paraphrased';

export interface EvalQuestion {
  id: string;
  set: QuestionSet;
  kind: QuestionKind;
  question: string;
  /** The corpus document (id relative to node_modules) the question was written from. */
  doc: string;
  /** A verbatim span of that document that answers the question. */
  answer: string;
  /** Other corpus documents that contain the answer span verbatim: a result from them is right too. */
  alt_docs?: string[];
  /** Content-word overlap of the question with the ~1000 characters around the answer. */
  overlap?: number;
}

const SETS: readonly string[] = ['dev', 'test'];
const KINDS: readonly string[] = ['same', 'paraphrased'];

/** Reads every question; a line that is not one is an error that names it (a partial last line is skipped: the file may be growing). */
export async function readQuestions(file: string): Promise<EvalQuestion[]> {
  const lines = (await readFile(file, 'utf8')).split('\n');
  const questions: EvalQuestion[] = [];
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    let value: Partial<EvalQuestion>;
    try {
      value = JSON.parse(line) as Partial<EvalQuestion>;
    } catch (error) {
      if (index === lines.length - 1) return;
      throw new Error(`${file}:${index + 1}: not JSON (${(error as Error).message})`);
    }
    const valid =
      typeof value.id === 'string' && SETS.includes(value.set!) && KINDS.includes(value.kind!) && typeof value.question === 'string' && typeof value.doc === 'string' && typeof value.answer === 'string';
    if (!valid) throw new Error(`${file}:${index + 1}: needs id, set (dev|test), kind (same|paraphrased), question, doc and answer`);
    questions.push(value as EvalQuestion);
  });
  return questions;
}

/** The documents a result may come from to count as right. */
export const rightDocuments = (question: EvalQuestion) => new Set([question.doc, ...(question.alt_docs ?? [])]);
