import Foundation

/// `storekeeper verify --bundle-id ID [--environment Production|Sandbox]… [--root FILE.pem]…
/// [--app-apple-id N] FILE|-`
///
/// A support tool: verifies a signed transaction, renewal info or notification `signedPayload`
/// (told apart by the keys of its payload) exactly as the server would, prints the decoded
/// content as JSON on stdout and returns 0; prints the refusal reason on stderr and returns 1;
/// returns 2 for usage errors. Without `--environment`, Production and Sandbox are accepted.
public enum VerifyCommand {
  static let usage =
    "usage: storekeeper verify --bundle-id ID [--environment Production|Sandbox] [--root FILE.pem] "
    + "[--app-apple-id N] FILE|-"

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
    let token: String
    do {
      verifier = try SignedDataVerifier(configuration: options.configuration())
      token = try options.readToken()
    } catch {
      writeError("\(error)")
      return 2
    }
    return report(verify(token, with: verifier))
  }

  private static func verify(_ token: String, with verifier: SignedDataVerifier)
    -> VerificationResult<String>
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    func json<T: Encodable>(_ value: T) -> String {
      (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
    switch PayloadKind(peeking: token) {
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
