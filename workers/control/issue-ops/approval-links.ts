import { ApiError } from "../../http/errors";
import type { IssueOpHandler } from "./types";

// Placeholder until implemented.
export const linkApproval: IssueOpHandler<"linkApproval"> = async () => {
  throw new ApiError(501, "Not implemented");
};
// Placeholder until implemented.
export const unlinkApproval: IssueOpHandler<"unlinkApproval"> = async () => {
  throw new ApiError(501, "Not implemented");
};
