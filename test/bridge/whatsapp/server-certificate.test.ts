/**
 * The certificate chain check on its own (bridge/src/whatsapp/server-certificate.ts): each rule, on
 * chains made by hand. Real Baileys against the fake WhatsApp is in fake-whatsapp/server-certificate.test.ts.
 */
import { Curve, type KeyPair, proto } from "@whiskeysockets/baileys";
import { describe, expect, it } from "vitest";
import {
  certificateChainProblem,
  serverHelloProblem,
} from "../../../bridge/src/whatsapp/server-certificate.ts";
import { certificateChain, ServerHandshake } from "../../fake-whatsapp/noise.ts";

const Details = proto.CertChain.NoiseCertificate.Details;

interface ChainSpec {
  intermediateIssuer?: number;
  /** null: the field is left out. */
  intermediateSerial?: number | null;
  leafIssuer?: number | null;
  leafSigner?: KeyPair;
}

function chain(root: KeyPair, server: KeyPair, spec: ChainSpec = {}): Uint8Array {
  const intermediateKey = Curve.generateKeyPair();
  const intermediate = Details.encode({
    ...(spec.intermediateSerial === null ? {} : { serial: spec.intermediateSerial ?? 7 }),
    issuerSerial: spec.intermediateIssuer ?? 0,
    key: intermediateKey.public,
  }).finish();
  const leaf = Details.encode({
    serial: 8,
    ...(spec.leafIssuer === null ? {} : { issuerSerial: spec.leafIssuer ?? 7 }),
    key: server.public,
  }).finish();
  return proto.CertChain.encode({
    intermediate: { details: intermediate, signature: Curve.sign(root.private, intermediate) },
    leaf: { details: leaf, signature: Curve.sign((spec.leafSigner ?? intermediateKey).private, leaf) },
  }).finish();
}

describe("server certificate chain", () => {
  const root = Curve.generateKeyPair();
  const server = Curve.generateKeyPair();

  it("accepts a sound chain and names what is wrong with each broken one", () => {
    expect(certificateChainProblem(chain(root, server), server.public, root.public)).toBeNull();
    expect(
      certificateChainProblem(chain(root, server), server.public, Curve.generateKeyPair().public),
    ).toMatch(/intermediate certificate is not signed by WhatsApp's root key/);
    expect(
      certificateChainProblem(chain(root, server, { intermediateIssuer: 3 }), server.public, root.public),
    ).toBe("the intermediate certificate names another issuer");
    expect(certificateChainProblem(chain(root, server, { leafIssuer: 9 }), server.public, root.public)).toBe(
      "the leaf certificate names another issuer",
    );
    const stranger = Curve.generateKeyPair();
    expect(
      certificateChainProblem(chain(root, server, { leafSigner: stranger }), server.public, root.public),
    ).toMatch(/leaf certificate is not signed by the intermediate/);
    expect(certificateChainProblem(chain(root, server), stranger.public, root.public)).toMatch(
      /leaf certificate is for another key/,
    );
    expect(certificateChainProblem(Buffer.from("not a chain at all"), server.public, root.public)).toMatch(
      /does not decode|no intermediate/,
    );
    const leafless = proto.CertChain.encode({
      intermediate: { details: Buffer.from([1]), signature: Buffer.alloc(64) },
    });
    expect(certificateChainProblem(leafless.finish(), server.public, root.public)).toBe(
      "no leaf certificate",
    );
  });

  it("an absent serial counts as 0 (as whatsmeow reads it)", () => {
    expect(
      certificateChainProblem(
        chain(root, server, { intermediateSerial: null, leafIssuer: null }),
        server.public,
        root.public,
      ),
    ).toBeNull();
  });

  it("the upstream defect: Baileys' Curve.verify takes a forged signature for a good one", () => {
    const details = Buffer.from("intermediate details");
    const forged = Curve.sign(Curve.generateKeyPair().private, details);
    expect(Curve.verify(root.public, details, forged)).toBe(true);
  });

  it("reads the server's hello with the connection's ephemeral key, and refuses when none opens it", () => {
    const ephemeral = Curve.generateKeyPair();
    const hello = proto.HandshakeMessage.encode({ clientHello: { ephemeral: ephemeral.public } }).finish();
    const serverHello = new ServerHandshake(server).serverHello(hello, certificateChain(server, root));
    const other = Curve.generateKeyPair();
    expect(serverHelloProblem(serverHello, [other, ephemeral], root.public)).toBeNull();
    expect(serverHelloProblem(serverHello, [other], root.public)).toBe(
      "the server's hello could not be read with this connection's key",
    );
    expect(serverHelloProblem(serverHello, [ephemeral], other.public)).toMatch(
      /not signed by WhatsApp's root/,
    );
  });
});
