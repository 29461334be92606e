/**
 * GraphQL enum names mapped to the values the REST service speaks. The question filter statuses
 * happen to be spelt the same on both sides; the map keeps that a stated fact, not an accident.
 */
export const QuestionStatus = { ANSWERED: 'ANSWERED', UNANSWERED: 'UNANSWERED', FINISHED: 'FINISHED' } as const;
export type QuestionStatus = (typeof QuestionStatus)[keyof typeof QuestionStatus];
