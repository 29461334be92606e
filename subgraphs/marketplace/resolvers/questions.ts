import { badUserInput } from '../../kit/errors.ts';
import { forwardConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { QuestionDto } from '../client.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';
import { write } from '../loaders.ts';
import { writeThenRead } from './products.ts';

export const questionResolvers: Resolvers = {
  Query: {
    questions: (_parent, { platform, status, first, after }, { loaders, cursors }) => {
      if (/[,;\s]/.test(nonBlank(platform, 'platform'))) throw badUserInput('platform', 'must be a single marketplace code');
      return forwardConnection<QuestionDto>(
        'marketplace-questions',
        { first, after },
        {
          defaultSize: 20,
          maxSize: 100,
          filters: { platform, status: status ?? null },
          signer: cursors,
          idOf: (question) => question.id,
          fetchPage: async (cursor) => {
            const page = await loaders.questionPages.load({ platform, status: status ?? undefined, cursor: cursor ?? undefined });
            return { items: page.questions, next: page.cursor };
          },
        },
      );
    },
    question: (_parent, { id }, { loaders }) => loaders.question.load(id),
  },
  Mutation: {
    deleteQuestion: async (_parent, { id }, { client, loaders }) => {
      await write(loaders, 'questions', () => client.deleteQuestion(id));
      return { id };
    },
    answerQuestion: async (_parent, { id, answer }, { client, loaders }) => {
      nonBlank(answer, 'answer');
      return writeThenRead({
        what: 'the service recorded the answer to the question',
        id,
        // Answering it again is refused: it is answered now.
        follow: `read it with question(id: ${JSON.stringify(id)}).`,
        write: () => write(loaders, 'questions', () => client.answerQuestion(id, answer)),
        read: () => loaders.question.load(id),
      });
    },
  },
  Question: {
    __resolveReference: (reference, { loaders }) => loaders.question.load(reference.id),
    product: (question, _args, { loaders }) => (question.sku ? loaders.product.load(question.sku) : null),
  },
};
