import { ApiError } from "../../http/errors";
import type { IssueOpHandler } from "./types";

// Placeholder until implemented.
export const releaseIssue: IssueOpHandler<"release"> = async () => {
  throw new ApiError(501, "Not implemented");
};
