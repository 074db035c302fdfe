// How the login throttle names a client's source (issue 25 M-e): IPv6 by its /64, IPv4 by address.
import { describe, expect, it } from "vitest";
import { throttleSource } from "../../../workers/auth/client-address";

describe("throttleSource", () => {
  it("keys every spelling of an IPv6 address by its /64", () => {
    const net = "2001:db8:abcd:12::/64";
    for (const address of [
      "2001:db8:abcd:12::1",
      "2001:0db8:ABCD:0012:ffff:ffff:ffff:ffff",
      "2001:db8:abcd:12:1:2:3:4",
      "[2001:db8:abcd:12::9]",
      "2001:db8:abcd:12::1%eth0",
    ])
      expect(throttleSource(address), address).toBe(net);
    expect(throttleSource("2001:db8:abcd:13::1")).toBe("2001:db8:abcd:13::/64");
    expect(throttleSource("::1")).toBe("0:0:0:0::/64");
  });

  it("keeps IPv4 addresses whole, IPv4-mapped IPv6 included, and anything else verbatim", () => {
    expect(throttleSource("203.0.113.7")).toBe("203.0.113.7");
    expect(throttleSource("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(throttleSource("::ffff:cb00:7107")).toBe("203.0.113.7");
    expect(throttleSource("unknown")).toBe("unknown");
    expect(throttleSource("1:2:3:4:5:6:7:8:9")).toBe("1:2:3:4:5:6:7:8:9");
    expect(throttleSource("1::2::3")).toBe("1::2::3");
    expect(throttleSource("300.1.1.1")).toBe("300.1.1.1");
  });
});
