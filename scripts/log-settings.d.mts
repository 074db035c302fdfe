export declare const DEFAULT_LOG_LEVEL: string;
export declare function logSettings(env: Record<string, string | undefined>): {
  level: string;
  requests: boolean;
};
