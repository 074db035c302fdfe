import { ApiError } from "../../http/errors";
import type { IssueOpHandler } from "./types";

// Placeholder until implemented.
export const putDocument: IssueOpHandler<"putDocument"> = async () => {
  throw new ApiError(501, "Not implemented");
};
// Placeholder until implemented.
export const deleteDocument: IssueOpHandler<"deleteDocument"> = async () => {
  throw new ApiError(501, "Not implemented");
};
