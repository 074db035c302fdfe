/**
 * Sending messages: the shapes every messaging route shares, and building a send's content. HTTP in
 * routes.ts and actions.ts.
 *
 * This index is what the rest of the code may import from here.
 */
export {
  ChatParamsSchema,
  MessageParamsSchema,
  MessageResourceSchema,
  messagingErrors,
  ReactBodySchema,
  SearchQuerySchema,
  SessionParamSchema,
} from "./schemas";
export {
  checkPoll,
  LocationBodyShape,
  locationContent,
  MentionsSchema,
  MessageInputSchema,
  PollBodyShape,
  pollContent,
  SendBodySchema,
  toOutgoingContent,
} from "./send-content";
