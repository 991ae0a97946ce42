import AppStore
import Foundation
import Testing

/// A chain and a JWS made by the `openssl` command-line tool, not by this project's code, so
/// the verifier is checked against an independent implementation of the same format.
@Suite final class OpenSSLCrossCheckTests {
  let directory: URL
  let rootPEM: String
  let chain: [String]  // base64 DER: leaf, intermediate, root

  init() async throws {
    let directory = try Subprocess.temporaryDirectory()
    self.directory = directory
    func openssl(_ arguments: String...) async throws {
      try await Subprocess.run(["openssl"] + arguments, in: directory)
    }
    try Self.write(
      "[ext]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n",
      to: "root.cnf", in: directory)
    try Self.write(
      "[ext]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
        + "1.2.840.113635.100.6.2.1=DER:0500\n", to: "intermediate.cnf", in: directory)
    try Self.write(
      "[ext]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        + "1.2.840.113635.100.6.11.1=DER:0500\n", to: "leaf.cnf", in: directory)
    for name in ["root", "intermediate", "leaf"] {
      try await openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(name).key")
    }
    try await openssl(
      "req", "-x509", "-new", "-key", "root.key", "-subj", "/CN=Cross-check Root", "-days", "3650",
      "-config", "root.cnf", "-extensions", "ext", "-out", "root.pem")
    for (name, issuer) in [("intermediate", "root"), ("leaf", "intermediate")] {
      try await openssl(
        "req", "-new", "-key", "\(name).key", "-subj", "/CN=Cross-check \(name)", "-out",
        "\(name).csr")
      try await openssl(
        "x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key",
        "-set_serial", name == "leaf" ? "3" : "2", "-days", "3650", "-extfile", "\(name).cnf",
        "-extensions", "ext",
        "-out", "\(name).pem")
    }
    rootPEM = try String(contentsOf: directory.appendingPathComponent("root.pem"), encoding: .utf8)
    var chain: [String] = []
    for name in ["leaf", "intermediate", "root"] {
      try await openssl("x509", "-in", "\(name).pem", "-outform", "DER", "-out", "\(name).der")
      let base64 = try await Subprocess.run(
        ["openssl", "base64", "-A", "-in", "\(name).der"], in: directory)
      chain.append(
        String(decoding: base64, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
    self.chain = chain
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  @discardableResult
  func openssl(_ arguments: String...) async throws -> Data {
    try await Subprocess.run(["openssl"] + arguments, in: directory)
  }

  static func write(_ text: String, to name: String, in directory: URL) throws {
    try Data(text.utf8).write(to: directory.appendingPathComponent(name))
  }

  /// `header.payload.signature`, signed by `openssl dgst -sha256 -sign` with the leaf key.
  func token(chain: [String], payload: String) async throws -> String {
    let header = #"{"alg":"ES256","x5c":["\#(chain.joined(separator: #"",""#))"]}"#
    let input = Self.base64URL(Data(header.utf8)) + "." + Self.base64URL(Data(payload.utf8))
    try Data(input.utf8).write(to: directory.appendingPathComponent("input.txt"))
    let der = try await openssl("dgst", "-sha256", "-sign", "leaf.key", "input.txt")
    return input + "." + Self.base64URL(Data(try Self.rawSignature(fromDER: [UInt8](der))))
  }

  var payload: String {
    #"{"transactionId":"42","originalTransactionId":"42","bundleId":"\#(Fixtures.bundleId)","productId":"gold.100","#
      + #""purchaseDate":\#(Fixtures.nowMilliseconds),"signedDate":\#(Fixtures.nowMilliseconds),"environment":"Sandbox"}"#
  }

  func verifier() throws -> SignedDataVerifier {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.allowedEnvironments = ["Sandbox"]
    configuration.extraRootCertificatesPEM = [rootPEM]
    return try SignedDataVerifier(configuration: configuration)
  }

  @Test func acceptsAJWSMadeByTheOpenSSLTool() async throws {
    let result = try verifier().verifyTransaction(try await token(chain: chain, payload: payload))
    #expect(result.value?.transactionId == "42")
  }

  @Test func refusesTheTokenWithAnyCharacterChanged() async throws {
    let verifier = try verifier()
    let original = try await token(chain: chain, payload: payload)
    var characters = Array(original.utf8)
    let dots = characters.indices.filter { characters[$0] == UInt8(ascii: ".") }
    // Every segment's first and last characters, and a stride through the whole token.
    let positions = Set(
      Array(stride(from: 0, to: characters.count, by: 37))
        + [0, dots[0] - 1, dots[0] + 1, dots[1] - 1, dots[1] + 1, characters.count - 1]
    ).subtracting(dots)
    for position in positions.sorted() {
      let saved = characters[position]
      characters[position] = saved == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
      let result = verifier.verifyTransaction(String(decoding: characters, as: UTF8.self))
      #expect(result.value == nil, "accepted with character \(position) changed")
      characters[position] = saved
    }
    #expect(verifier.verifyTransaction(String(decoding: characters, as: UTF8.self)).value != nil)
  }

  @Test func refusesAChainWithTheLeafOrIntermediateAlteredEvenWhenFreshlySigned() async throws {
    let verifier = try verifier()
    for index in 0..<2 {
      var der = try #require(Data(base64Encoded: chain[index]))
      der[der.count / 2] ^= 0x01
      var altered = chain
      altered[index] = der.base64EncodedString()
      let result = verifier.verifyTransaction(try await token(chain: altered, payload: payload))
      // A changed name breaks the path (untrusted_root), a changed body its signature.
      #expect(
        result == .invalid("untrusted_root") || result == .invalid("invalid_certificate"),
        "certificate \(index) altered: \(result.reason ?? "accepted")")
    }
  }

  /// Apple's verifier never reads the root a token presents: the chain is built to the
  /// configured one, so an altered (or re-issued) presented root changes nothing.
  @Test func ignoresTheRootTheTokenPresents() async throws {
    var der = try #require(Data(base64Encoded: chain[2]))
    der[der.count / 2] ^= 0x01
    var altered = chain
    altered[2] = der.base64EncodedString()
    let result = try verifier().verifyTransaction(try await token(chain: altered, payload: payload))
    #expect(result.value?.transactionId == "42", "\(result.reason ?? "accepted")")
  }

  static func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  /// Reads `SEQUENCE { INTEGER r, INTEGER s }` (short lengths: P-256) into 32-byte R‖S.
  static func rawSignature(fromDER der: [UInt8]) throws -> [UInt8] {
    struct NotECDSA: Error {}
    guard der.count > 2, der[0] == 0x30, Int(der[1]) == der.count - 2 else { throw NotECDSA() }
    var offset = 2
    var result: [UInt8] = []
    for _ in 0..<2 {
      guard der[offset] == 0x02 else { throw NotECDSA() }
      let length = Int(der[offset + 1])
      let value = der[(offset + 2)..<(offset + 2 + length)].drop { $0 == 0 }
      guard value.count <= 32 else { throw NotECDSA() }
      result += [UInt8](repeating: 0, count: 32 - value.count) + value
      offset += 2 + length
    }
    return result
  }
}
