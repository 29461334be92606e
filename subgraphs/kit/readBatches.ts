import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApolloServer, BaseContext } from '@apollo/server';
import { getOperationAST, type DocumentNode } from 'graphql';
import { parseWithin } from '../../lib/operationShapeLimits.ts';
import { headerMapOf, refuseTooLarge } from '../../lib/apolloHttp.ts';
import { CALLS_MADE_HEADER } from '../../lib/callBudget.ts';
import { DATA_ONLY_HEADER } from '../../lib/dataOnlyAnswers.ts';
import { PayloadTooLargeError, readBody, sendJson } from '../../lib/http.ts';
import { budgetsOf, encodeFrame, MAX_READ_BATCH, READ_BATCH_HEADER, READ_BATCH_TYPE } from '../../lib/readBatch.ts';
import { illFormedVariablesMessage, isJsonContentType } from '../../lib/requestChecks.ts';
import { createBatchScopes, type CallScope } from './callScope.ts';
import type { CompiledExecution } from './compiledExecution.ts';

/** Headers of an operation's answer a frame carries: what the gateway reads of a lone answer. */
const FRAME_HEADERS = ['content-type', 'cache-control', 'retry-after'];

interface ReadAnswer {
  status: number;
  headers: Record<string, string>;
  bytes: Buffer;
}

export interface ReadBatchOptions<Context extends BaseContext> {
  server: ApolloServer<Context>;
  /** The compiled path, when on: a repeat's answer is made without Apollo Server. */
  execution: CompiledExecution | undefined;
  context(headers: IncomingMessage['headers'], scope: CallScope): Context | Promise<Context>;
  /** Upstream calls one read may make, whatever its budget says. */
  cap: number;
  maxBodyBytes: number;
  /** The token bound `/graphql` parses with: a read's text is parsed here first, to tell a query. */
  maxTokens: number;
}

/** Whether a request is a batch of reads from the gateway. */
export function isReadBatch(req: IncomingMessage): boolean {
  return req.method === 'POST' && req.headers[READ_BATCH_HEADER] !== undefined;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** A read's frame holding one GraphQL error, as Apollo Server words a request it refuses. */
function errorAnswer(status: number, message: string, code: string): ReadAnswer {
  return { status, headers: JSON_TYPE, bytes: Buffer.from(JSON.stringify({ errors: [{ message, extensions: { code } }] })) };
}

/**
 * Whether a request's operation is a query. One that does not parse (within the token bound: past
 * it, this parse would cost what Apollo Server's refusal saves), or names no operation it holds,
 * counts as a read: Apollo Server words its error as it would alone.
 */
function isRead(body: Record<string, unknown>, maxTokens: number): boolean {
  if (typeof body.query !== 'string') return true;
  let document: DocumentNode;
  try {
    document = parseWithin(body.query, { maxTokens });
  } catch {
    return true;
  }
  const operation = getOperationAST(document, typeof body.operationName === 'string' ? body.operationName : undefined);
  return operation === null || operation === undefined || operation.operation === 'query';
}

function refuse(res: ServerResponse, message: string): void {
  sendJson(res, 400, { errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
}

function isRequestObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Answers a batch of reads (lib/readBatch.ts): each read runs as a request of its own, with its own
 * budget, context and loaders, the credential the batch came with, and the same answer it would
 * have had alone; each frame is written as its read finishes. Frames finished in the same turn of
 * the event loop leave in one write.
 */
export function createReadBatchHandler<Context extends BaseContext>({ server, execution, context, cap, maxBodyBytes, maxTokens }: ReadBatchOptions<Context>) {
  async function answerOne(body: Record<string, unknown>, req: IncomingMessage, scope: CallScope): Promise<ReadAnswer> {
    const illFormed = illFormedVariablesMessage(body.variables);
    if (illFormed) return errorAnswer(400, illFormed, 'BAD_USER_INPUT');
    // Not a named closure: the TypeScript loader would define a `name` on it for every read.
    const compiled = execution ? await execution.answer(body, () => context(req.headers, scope), req.headers.accept) : undefined;
    if (compiled?.served) return { status: 200, headers: { 'content-type': compiled.contentType, [DATA_ONLY_HEADER]: '1' }, bytes: compiled.bytes };
    const built = compiled?.context;
    // A batch runs its operations side by side: a mutation, which must run alone and in order, is never one of them.
    // A compiled repeat that handed back its context is a query already: its text is not parsed again.
    if (!built && !isRead(body, maxTokens)) return errorAnswer(400, 'a batch of reads carries queries only: send a mutation on its own', 'BAD_REQUEST');
    const response = await server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: 'POST', headers: headerMapOf(req.headers), search: '', body },
      context: built ? async () => built : async () => context(req.headers, scope),
    });
    const headers: Record<string, string> = {};
    for (const name of FRAME_HEADERS) {
      const value = response.headers.get(name);
      if (value !== undefined) headers[name] = value;
    }
    if (response.body.kind === 'complete') return { status: response.status ?? 200, headers, bytes: Buffer.from(response.body.string) };
    const chunks: string[] = [];
    for await (const chunk of response.body.asyncIterator) chunks.push(chunk);
    return { status: response.status ?? 200, headers, bytes: Buffer.from(chunks.join('')) };
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) refuseTooLarge(res, maxBodyBytes);
      else res.destroy();
      return;
    }
    if (!isJsonContentType(req.headers['content-type'])) return refuse(res, 'a batch of reads is JSON');
    let reads: unknown;
    try {
      reads = JSON.parse(raw.toString('utf8'));
    } catch {
      return refuse(res, 'request body is not valid JSON');
    }
    if (!Array.isArray(reads) || reads.length === 0 || reads.length > MAX_READ_BATCH || !reads.every(isRequestObject)) {
      return refuse(res, `a batch of reads is an array of 1 to ${MAX_READ_BATCH} GraphQL requests`);
    }
    const budgets = budgetsOf(req.headers[READ_BATCH_HEADER], reads.length, cap);
    if (!budgets) return refuse(res, `${READ_BATCH_HEADER} gives one budget per read`);
    const scopes = createBatchScopes(res, budgets);
    res.writeHead(200, { 'content-type': READ_BATCH_TYPE, 'cache-control': 'no-store' });
    let corked = false;
    const flush = () => {
      if (!corked) return;
      corked = false;
      res.uncork();
    };
    const write = (index: number, answer: ReadAnswer) => {
      if (res.destroyed) return;
      if (!corked) {
        corked = true;
        res.cork();
        setImmediate(flush);
      }
      const headers = { ...answer.headers, [CALLS_MADE_HEADER]: String(scopes[index]!.calls) };
      for (const part of encodeFrame(index, answer.status, headers, answer.bytes)) res.write(part);
    };
    await Promise.all(
      reads.map((read, index) =>
        answerOne(read, req, scopes[index]!).then(
          (answer) => write(index, answer),
          // What Apollo Server would have answered for a failure outside GraphQL's own errors.
          () => write(index, errorAnswer(500, 'internal error', 'INTERNAL_SERVER_ERROR')),
        ),
      ),
    );
    // Ended while still corked, the last frames and the stream's end leave in one write.
    corked = false;
    res.end();
  };
}
