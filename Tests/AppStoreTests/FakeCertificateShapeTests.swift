import FakeAppStore
import Foundation
import Testing

/// The fake's chain is shaped as Apple's is, as the `openssl` tool (not this project's code)
/// reads it: strict X.509 verification passes, which Apple's libraries ask for and which needs
/// each issued certificate to name its issuer's key identifier.
@Suite final class FakeCertificateShapeTests {
  let directory: URL
  let authority: FakeCertificateAuthority

  init() async throws {
    directory = try Subprocess.temporaryDirectory()
    authority = try FakeCertificateAuthority()
    for (name, base64) in zip(["leaf", "intermediate", "root"], authority.certificateChainBase64) {
      try Data(base64Encoded: base64)?.write(to: directory.appendingPathComponent("\(name).der"))
      try await openssl("x509", "-inform", "DER", "-in", "\(name).der", "-out", "\(name).pem")
    }
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  @discardableResult
  func openssl(_ arguments: String...) async throws -> String {
    String(
      decoding: try await Subprocess.run(["openssl"] + arguments, in: directory), as: UTF8.self)
  }

  /// `openssl x509 -ext` output of one certificate, e.g. "X509v3 Basic Constraints: critical".
  func extensions(_ name: String, _ list: String) async throws -> String {
    try await openssl("x509", "-in", "\(name).pem", "-noout", "-ext", list)
  }

  @Test func theChainPassesOpenSSLsStrictVerification() async throws {
    let answer = try await openssl(
      "verify", "-x509_strict", "-CAfile", "root.pem", "-untrusted", "intermediate.pem",
      "leaf.pem")
    #expect(answer.contains("leaf.pem: OK"), "\(answer)")
  }

  @Test func eachIssuedCertificateNamesItsIssuersKeyIdentifier() async throws {
    func keyId(_ text: String, after label: String) -> String? {
      let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let index = lines.firstIndex(where: { $0.hasPrefix(label) }),
        index + 1 < lines.count
      else { return nil }
      return lines[index + 1].replacingOccurrences(of: "keyid:", with: "")
    }
    let root = try await extensions("root", "subjectKeyIdentifier,authorityKeyIdentifier")
    let intermediate = try await extensions(
      "intermediate", "subjectKeyIdentifier,authorityKeyIdentifier")
    let leaf = try await extensions("leaf", "subjectKeyIdentifier,authorityKeyIdentifier")
    let rootId = try #require(keyId(root, after: "X509v3 Subject Key Identifier"))
    let intermediateId = try #require(
      keyId(intermediate, after: "X509v3 Subject Key Identifier"))
    #expect(keyId(leaf, after: "X509v3 Subject Key Identifier") != nil)
    // Apple Root CA - G3 carries no authority key identifier; what it issues does.
    #expect(!root.contains("Authority Key Identifier"))
    #expect(keyId(intermediate, after: "X509v3 Authority Key Identifier") == rootId)
    #expect(keyId(leaf, after: "X509v3 Authority Key Identifier") == intermediateId)
  }

  @Test func constraintsAndUsagesAreCriticalAndAsApplesAre() async throws {
    let list = "basicConstraints,keyUsage"
    let root = try await extensions("root", list)
    let intermediate = try await extensions("intermediate", list)
    let leaf = try await extensions("leaf", list)
    for text in [root, intermediate, leaf] {
      #expect(text.contains("X509v3 Basic Constraints: critical"), "\(text)")
      #expect(text.contains("X509v3 Key Usage: critical"), "\(text)")
    }
    #expect(root.contains("CA:TRUE") && !root.contains("pathlen"))
    #expect(intermediate.contains("CA:TRUE, pathlen:0"))
    #expect(leaf.contains("CA:FALSE") && leaf.contains("Digital Signature"))
    #expect(intermediate.contains("Certificate Sign, CRL Sign"))
  }

  @Test func applesMarkersAreOnTheIntermediateAndTheLeafOnly() async throws {
    func text(_ name: String) async throws -> String {
      try await openssl("x509", "-in", "\(name).pem", "-noout", "-text")
    }
    #expect(try await text("intermediate").contains("1.2.840.113635.100.6.2.1"))
    #expect(try await text("leaf").contains("1.2.840.113635.100.6.11.1"))
    #expect(!(try await text("root")).contains("1.2.840.113635.100.6"))
  }
}
