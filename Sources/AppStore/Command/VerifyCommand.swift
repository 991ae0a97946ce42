import Foundation

/// `storekeeper verify --bundle-id ID [--environment Production|Sandbox]… [--root FILE.pem]…
/// [--app-apple-id N] FILE|-`
///
/// A support tool: verifies a signed transaction, renewal info or notification `signedPayload`
/// (told apart by the keys of its payload), or an app receipt (base64 or DER: its PKCS#7
/// signature, chain to Apple Inc. Root CA at its creation date and bundle id), exactly as the
/// server would before asking Apple anything, prints the decoded content as JSON on stdout
/// and returns 0; prints the refusal reason on stderr and returns 1; returns 2 for usage
/// errors. Without `--environment`, Production and Sandbox are accepted.
public enum VerifyCommand {
  static let usage =
    "usage: storekeeper verify --bundle-id ID [--environment Production|Sandbox] [--root FILE.pem] "
    + "[--app-apple-id N] FILE|-  (FILE: a JWS, or an app receipt in base64 or DER)"

  /// `arguments` are those after the executable name; a leading "verify" is skipped.
  public static func run(_ arguments: [String]) -> Int32 {
    let options: Options
    do {
      options = try Options(
        parsing: arguments.first == "verify" ? Array(arguments.dropFirst()) : arguments)
    } catch {
      writeError("\(error)\n\(usage)")
      return 2
    }
    let verifier: SignedDataVerifier
    let receipts: AppReceiptSignatureVerifier
    let input: [UInt8]
    do {
      let configuration = try options.configuration()
      verifier = try SignedDataVerifier(configuration: configuration)
      receipts = try AppReceiptSignatureVerifier(configuration: configuration)
      input = try options.readInput()
    } catch {
      writeError("\(error)")
      return 2
    }
    return report(verify(input, with: verifier, receipts: receipts))
  }

  private static func verify(
    _ input: [UInt8], with verifier: SignedDataVerifier, receipts: AppReceiptSignatureVerifier
  ) -> VerificationResult<String> {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    func json<T: Encodable>(_ value: T) -> String {
      (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
    func receipt(_ check: AppReceiptCheck) -> VerificationResult<String> {
      switch check {
      case .signed(let signed): return .valid(json(AppReceiptView(signed)))
      case .refused(let reason): return .refused(reason)
      case .notAppReceipt: return .invalid("not_an_app_receipt")
      }
    }
    // DER starts with a SEQUENCE tag; base64 and JWS never do.
    if input.first == 0x30 { return receipt(receipts.check(der: input)) }
    let token = String(decoding: input, as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    // JSON output of signed payloads keeps Apple's camelCase keys.
    encoder.keyEncodingStrategy = .useDefaultKeys
    switch PayloadKind(peeking: token) {
    case .appReceipt:
      encoder.keyEncodingStrategy = .convertToSnakeCase
      return receipt(receipts.check(base64: token))
    case .notification: return verifier.verifyNotification(token).map { json($0) }
    case .renewalInfo: return verifier.verifyRenewalInfo(token).map { json($0) }
    case .transaction: return verifier.verifyTransaction(token).map { json($0) }
    }
  }

  private static func report(_ result: VerificationResult<String>) -> Int32 {
    switch result {
    case .valid(let text):
      FileHandle.standardOutput.write(Data((text + "\n").utf8))
      return 0
    case .invalid, .retryable, .misconfigured:
      writeError(result.reason ?? "not verified")
      return 1
    }
  }

  static func writeError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }
}
