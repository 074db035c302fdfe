/**
 * What comes back on the company's line: members' answers to its notices (votes, quoted replies,
 * reactions), applied as them through the dashboard's routes. app.ts registers the handler with the
 * SessionDO's relay (durable-objects/messaging/line/relay.ts).
 *
 * This index is what the rest of the code may import from here.
 */
export { lineAnswersHandler } from "./apply";
export { APPROVAL_OPTIONS } from "./intent";
