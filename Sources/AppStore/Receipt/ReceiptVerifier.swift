import Foundation
import StorekeeperLogging

/// Verifies StoreKit 1 receipts — app receipts and iOS 6-style transaction receipts alike —
/// with Apple's verifyReceipt: the production URL first, the sandbox URL when Apple answers
/// 21007.
///
/// Outcomes, by Apple's `status` (docs/ARCHITECTURE.md has the table and its reasons):
/// `valid` for 0 (and 21006, an expired subscription's decoded transaction receipt) with this
/// app's bundle id in an allowed environment; `retryable` when Apple could not judge yet
/// (timeouts, connection errors, HTTP errors, 21005/21009/211xx unless Apple says they are not
/// retryable, 21002 for a receipt whose signature chains to Apple); `misconfigured` when the answer blames this server's settings (21004 the shared
/// secret, 21008 from production or 21007 from the sandbox a URL, 21000 a URL that does not
/// take our POST); `invalid` otherwise, with reason `verify_receipt_<status>`.
public final class ReceiptVerifier: Sendable {
  public let configuration: AppStoreConfiguration
  private let transport: any ReceiptTransport
  private let logger: Logger

  public init(
    configuration: AppStoreConfiguration,
    transport: any ReceiptTransport = HTTPReceiptTransport(),
    logger: Logger
  ) {
    self.configuration = configuration
    self.transport = transport
    self.logger = logger
  }

  /// `appleSigned`: the receipt's PKCS#7 signature was checked to chain to Apple for this app
  /// (`AppReceiptCheck.signed`). Apple's 21002 says the data was malformed *or* its service had
  /// a temporary issue; for a receipt Apple is known to have signed only the second can be
  /// true, so it is retryable, as 21005 is.
  public func verify(receipt: String, appleSigned: Bool = false) async
    -> VerificationResult<VerifiedReceipt>
  {
    guard let data = ReceiptData.repair(receipt), data.utf8.count <= ReceiptData.maximumLength
    else {
      return .refused(.malformedReceipt)
    }
    let body = Self.requestBody(receiptData: data, sharedSecret: configuration.sharedSecret)
    let production = await call(
      configuration.verifyReceiptURL, body: body, environment: .production)
    guard case .answered(let response) = production, response.status == 21007 else {
      return outcome(production, environment: .production, appleSigned: appleSigned)
    }
    // A sandbox receipt: only worth asking the sandbox when sandbox purchases count.
    guard configuration.allows(environment: AppStoreEnvironment.sandbox.rawValue) else {
      return configuration.refuseEnvironment(AppStoreEnvironment.sandbox.rawValue, logger: logger)
    }
    let sandbox = await call(
      configuration.verifyReceiptSandboxURL, body: body, environment: .sandbox)
    return outcome(sandbox, environment: .sandbox, appleSigned: appleSigned)
  }

  enum Answer {
    case answered(VerifyReceiptResponse)
    case unavailable(String)
  }

  private func call(_ url: URL, body: [UInt8], environment: AppStoreEnvironment) async -> Answer {
    let status: Int
    let bytes: [UInt8]
    do {
      (status, bytes) = try await transport.post(
        url: url, body: body, timeout: configuration.receiptTimeout)
    } catch ReceiptTransportError.timedOut {
      logger.warning("verifyReceipt timed out", ["environment": .string(environment.rawValue)])
      return .unavailable("verify_receipt_timeout")
    } catch {
      logger.warning(
        "verifyReceipt unreachable",
        ["environment": .string(environment.rawValue), "error": .string(String(describing: error))])
      return .unavailable("verify_receipt_unreachable")
    }
    guard (200..<300).contains(status) else {
      logger.warning(
        "verifyReceipt HTTP error",
        ["environment": .string(environment.rawValue), "http_status": .int(status)])
      return .unavailable("verify_receipt_http_\(status)")
    }
    guard let response = try? JSONDecoder().decode(VerifyReceiptResponse.self, from: Data(bytes)),
      response.status != nil
    else {
      logger.warning(
        "verifyReceipt answered with unreadable JSON",
        ["environment": .string(environment.rawValue)])
      return .unavailable("verify_receipt_bad_response")
    }
    return .answered(response)
  }

  private func outcome(
    _ answer: Answer, environment asked: AppStoreEnvironment, appleSigned: Bool
  ) -> VerificationResult<VerifiedReceipt> {
    let response: VerifyReceiptResponse
    switch answer {
    case .unavailable(let reason): return .retryable(reason)
    case .answered(let answered): response = answered
    }
    let status = response.status ?? -1
    switch status {
    case 0: return accept(response, environment: response.environment ?? asked.rawValue)
    case 21006 where response.receipt != nil:
      // An iOS 6-style receipt of a subscription that has expired: Apple still decodes it, and
      // its transactions are facts like any other (their expiry says it is over).
      return accept(response, environment: response.environment ?? asked.rawValue)
    case 21004:
      return .misconfigured(
        Misconfiguration(setting: .sharedSecret, status: status, environment: asked.rawValue))
    case 21000, 21007, 21008:
      // 21007 reaches here only from the sandbox URL and 21008 only as a first answer from the
      // production URL: either way the URL asked is not the environment it is configured as.
      // 21000 means the URL did not take the JSON POST this client always sends.
      return .misconfigured(
        Misconfiguration(
          setting: asked == .production ? .verifyReceiptURL : .verifyReceiptSandboxURL,
          status: status, environment: asked.rawValue))
    case 21002 where appleSigned:
      return .retryable("verify_receipt_\(status)")
    case 21005, 21009, 21100...21199:
      return response.isRetryable == false
        ? .invalid("verify_receipt_\(status)") : .retryable("verify_receipt_\(status)")
    default:
      return .invalid("verify_receipt_\(status)")
    }
  }

  private func accept(_ response: VerifyReceiptResponse, environment: String) -> VerificationResult<
    VerifiedReceipt
  > {
    guard let receipt = response.receipt, let bundleId = receipt.bundleId else {
      return .retryable("verify_receipt_bad_response")
    }
    guard bundleId == configuration.bundleId else { return .refused(.bundleIdMismatch) }
    guard configuration.allows(environment: environment) else {
      return configuration.refuseEnvironment(environment, logger: logger)
    }
    return .valid(
      VerifiedReceipt(
        environment: environment, bundleId: bundleId, format: receipt.format,
        transactions: response.transactions(bundleId: bundleId, environment: environment),
        latestReceipt: response.latestReceipt,
        pendingRenewals: response.pendingRenewalInfo ?? []))
  }

  static func requestBody(receiptData: String, sharedSecret: String?) -> [UInt8] {
    var object: [String: Any] = ["receipt-data": receiptData, "exclude-old-transactions": false]
    if let sharedSecret { object["password"] = sharedSecret }
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return [UInt8](data)
  }
}
