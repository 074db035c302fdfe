/** The next whole minute after `now` (epoch ms). */
export declare function nextMinute(now: number): number;
export declare function startLocalCron(options: { baseUrl: string; log: (message: string) => void }): {
  stop(): void;
};
