import { badUserInput } from '../../kit/errors.ts';
import { forwardConnection } from '../../kit/connections.ts';
import { nonBlank } from '../../kit/validate.ts';
import type { QuestionDto } from '../client.ts';
import type { Resolvers } from '../__generated__/resolvers.ts';

export const questionResolvers: Resolvers = {
  Query: {
    questions: (_parent, { platform, status, first, after }, { client, cursors }) => {
      if (/[,;\s]/.test(nonBlank(platform, 'platform'))) throw badUserInput('platform', 'must be a single marketplace code');
      return forwardConnection<QuestionDto>(
        'marketplace-questions',
        { first, after },
        {
          defaultSize: 20,
          maxSize: 100,
          filters: { platform, status: status ?? null },
          signer: cursors,
          fetchPage: async (cursor) => {
            const page = await client.listQuestions({ platform, status: status ?? undefined, cursor: cursor ?? undefined });
            return { items: page.questions, next: page.cursor };
          },
        },
      );
    },
    question: (_parent, { id }, { loaders }) => loaders.question.load(id),
  },
  Mutation: {
    deleteQuestion: async (_parent, { id }, { client }) => {
      await client.deleteQuestion(id);
      return { id };
    },
    answerQuestion: async (_parent, { id, answer }, { client }) => (await client.answerQuestion(id, nonBlank(answer, 'answer'))) ?? client.getQuestion(id),
  },
  Question: {
    __resolveReference: (reference, { loaders }) => loaders.question.load(reference.id),
    product: (question, _args, { loaders }) => (question.sku ? loaders.product.load(question.sku) : null),
  },
};
