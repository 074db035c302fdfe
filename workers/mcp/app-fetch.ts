/** The app's own fetch registry; it lives in http/app-fetch.ts so control/line can use it too. */
export { registerAppFetch, registeredAppFetch } from "../http/app-fetch";
