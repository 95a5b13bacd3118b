import { test } from "node:test";
import assert from "node:assert/strict";
import { checkLiteralHost, isPrivateAddress, PrivateAddressError } from "./net-guard.js";

test("loopback, private, link-local, shared and mapped addresses are private; public ones are not", () => {
  for (const a of [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
  ])
    assert.equal(isPrivateAddress(a), true, a);
  for (const a of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "example.com"]) assert.equal(isPrivateAddress(a), false, a);
});

test("a literal host is checked without a lookup, brackets and all", () => {
  assert.throws(() => checkLiteralHost("[::1]", false), PrivateAddressError);
  assert.throws(() => checkLiteralHost("127.0.0.1", false), /127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback or private-network address/);
  assert.doesNotThrow(() => checkLiteralHost("127.0.0.1", true));
  assert.doesNotThrow(() => checkLiteralHost("example.com", false), "names are checked after resolving");
});
