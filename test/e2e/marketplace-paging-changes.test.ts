import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_CREDENTIALS } from '../../emulators/marketplace/data.ts';
import { makeCursorSigner } from '../../subgraphs/kit/cursors.ts';
import { startTestStack } from '../support/stack.ts';
import { SELLER_HEADERS } from '../support/marketplaceSeller.ts';

/**
 * QA13, defect 2: a cursor that ends partway through an upstream page used to resume by position
 * in the re-read page, so removing an item already shown skipped one nobody had seen. BETA's 15
 * questions fit in one upstream page of 20, so every cursor below resumes inside that page.
 */
const SECRET = 'a-cursor-secret-these-tests-sign-old-cursors-with';
const t = await startTestStack({ CURSOR_SECRET: SECRET });
const emulator = t.emulator('marketplace');
const seller = SELLER_HEADERS;

const questionsPage = `query ($status: QuestionStatus, $first: Int, $after: String) {
  questions(platform: "BETA", status: $status, first: $first, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`;
type QuestionsPage = { questions: { edges: { cursor: string; node: { id: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
const productsPage = `query ($status: String, $first: Int, $after: String) {
  products(status: $status, first: $first, after: $after) { edges { node { sku } } pageInfo { hasNextPage endCursor } } }`;
type ProductsPage = { products: { edges: { node: { sku: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };

beforeEach(async () => {
  await emulator.reset();
});

async function questions(variables: { status?: string; first?: number; after?: string | null }) {
  const result = await t.gql<QuestionsPage>(questionsPage, { headers: seller, variables });
  expect(result.errors).toBeUndefined();
  return { ids: result.data!.questions.edges.map((edge) => edge.node.id), ...result.data!.questions.pageInfo };
}

/** Every question id from `after` to the end of the list, `first` at a time. */
async function questionsFrom(after: string | null, first: number, status?: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const page = await questions({ first, after, ...(status ? { status } : {}) });
    ids.push(...page.ids);
    if (!page.hasNextPage) return ids;
    after = page.endCursor;
  }
}

async function deleteQuestion(id: string) {
  const result = await t.gql(`mutation { deleteQuestion(id: "${id}") { id } }`, { headers: seller });
  expect(result).toEqual({ data: { deleteQuestion: { id } } });
}

const calls = async () => (await emulator.requests()).map((request) => `${request.method} ${request.path}${request.query.cursor ? ' (cursor)' : ''}`);

describe('paging questions while the list changes', () => {
  it('shows the question after the five shown when one of them is deleted (the QA repro)', async () => {
    const all = await questionsFrom(null, 20);
    expect(all.slice(0, 7)).toEqual(['BETA-100518', 'BETA-100481', 'BETA-100444', 'BETA-100407', 'BETA-100370', 'BETA-100333', 'BETA-100296']);
    await emulator.clearRequests();

    const first = await questions({ first: 5 });
    expect(first.ids).toEqual(all.slice(0, 5));
    await deleteQuestion('BETA-100444');
    const rest = await questionsFrom(first.endCursor, 5);

    expect(rest).toEqual(all.slice(5));
    // The page holding the cursor is read again, once per request: the upstream's own cursor
    // points only at the next page.
    expect(await calls()).toEqual(['GET /questions', 'DELETE /questions/BETA-100444', 'GET /questions', 'GET /questions']);
  });

  it('neither skips nor repeats when the last question shown is deleted, alone or with others shown', async () => {
    const all = await questionsFrom(null, 20);
    const first = await questions({ first: 5 });
    await deleteQuestion('BETA-100370');
    expect(await questionsFrom(first.endCursor, 4)).toEqual(all.slice(5));

    await emulator.reset();
    const again = await questions({ first: 5 });
    await deleteQuestion('BETA-100481');
    await deleteQuestion('BETA-100370');
    expect(await questionsFrom(again.endCursor, 5)).toEqual(all.slice(5));
  });

  it('repeats rather than skips when neither the last question shown nor the next one is left', async () => {
    const all = await questionsFrom(null, 20);
    const first = await questions({ first: 5 });
    await deleteQuestion('BETA-100370');
    await deleteQuestion('BETA-100333');
    const rest = await questionsFrom(first.endCursor, 20);
    const unseen = all.slice(5).filter((id) => id !== 'BETA-100333');
    expect(rest.filter((id) => !first.ids.includes(id))).toEqual(unseen);
  });

  it('keeps its place when a question shown leaves the status filter (answered while paging unanswered ones)', async () => {
    const unanswered = await questionsFrom(null, 20, 'UNANSWERED');
    expect(unanswered.length).toBeGreaterThan(4);
    const first = await questions({ status: 'UNANSWERED', first: 2 });
    const answered = await t.gql(`mutation { answerQuestion(id: "${first.ids[0]}", answer: "Yes, it ships in two days.") { id } }`, { headers: seller });
    expect(answered.errors).toBeUndefined();
    expect(await questionsFrom(first.endCursor, 2, 'UNANSWERED')).toEqual(unanswered.slice(2));
  });

  it('still accepts a cursor issued before the change, which resumes by position', async () => {
    const all = await questionsFrom(null, 20);
    const old = makeCursorSigner(SECRET).sign('marketplace-questions', { t: null, s: 5, f: { platform: 'BETA', status: null } });
    expect(await questionsFrom(old, 5)).toEqual(all.slice(5));
  });

  it('keeps the cursors small and free of credentials', async () => {
    const first = await t.gql<QuestionsPage>(questionsPage, { headers: seller, variables: { first: 15 } });
    const cursors = first.data!.questions.edges.map((edge) => edge.cursor);
    // The identity of the place (two ids of at most 24 characters, or their digests) costs at most
    // some 60 characters of JSON, 80 in base64, over a bare position, whatever the ids.
    const bare = makeCursorSigner(SECRET).sign('marketplace-questions', { t: null, s: 5, f: { platform: 'BETA', status: null } });
    for (const cursor of cursors) expect(cursor.length).toBeLessThanOrEqual(bare.length + 80);
    const text = cursors.map((cursor) => Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8')).join('');
    for (const secret of Object.values(DEMO_CREDENTIALS)) expect(text).not.toContain(secret);
  });
});

describe('paging products inside an upstream page', () => {
  it('gives the same list at any page size, one call per upstream page when paging by its size', async () => {
    const bySize = async (first: number) => {
      const skus: string[] = [];
      let after: string | null = null;
      for (;;) {
        const result: { data?: ProductsPage | null; errors?: unknown } = await t.gql<ProductsPage>(productsPage, { headers: seller, variables: { first, after } });
        expect(result.errors).toBeUndefined();
        skus.push(...result.data!.products.edges.map((edge) => edge.node.sku));
        if (!result.data!.products.pageInfo.hasNextPage) return skus;
        after = result.data!.products.pageInfo.endCursor;
      }
    };
    const byTen = await bySize(10);
    expect(byTen).toHaveLength(30);
    expect((await emulator.requests()).map((request) => request.path)).toEqual(['/products', '/products', '/products']);
    expect(await bySize(3)).toEqual(byTen);
    expect(await bySize(7)).toEqual(byTen);
  });
});
