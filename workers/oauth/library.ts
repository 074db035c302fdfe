// The OAuth library, loaded without its start-up notice (quiet-notice.ts); import it from here only.
import { restoreWarnings } from "./quiet-notice";

export {
  AuthorizationError,
  type AuthRequest,
  authorizationErrorRedirect,
  OAuthAuthorizationServer,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";

restoreWarnings();
