import AppStore
import Foundation
import StorekeeperLogging
import Testing

/// verifyReceipt statuses that blame this server's settings, not the customer's receipt.
@Suite struct MisconfigurationTests {
  static let production = URL(string: "https://apple.test/production")!
  static let sandbox = URL(string: "https://apple.test/sandbox")!

  func verify(_ answers: @escaping @Sendable (URL) -> [UInt8]) async
    -> VerificationResult<VerifiedReceipt>
  {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.allowedEnvironments = ["Production", "Sandbox"]
    configuration.verifyReceiptURL = Self.production
    configuration.verifyReceiptSandboxURL = Self.sandbox
    configuration.sharedSecret = "wrong"
    return await ReceiptVerifier(
      configuration: configuration, transport: ScriptedTransport { (200, answers($0)) },
      logger: Logger(label: "test", level: .critical)
    ).verify(receipt: "MIITdGE=")
  }

  @Test func aWrongSharedSecretIsMisconfiguredNotInvalid() async {
    let result = await verify { _ in ScriptedTransport.appleAnswer(status: 21004) }
    #expect(
      result
        == .misconfigured(
          Misconfiguration(setting: .sharedSecret, status: 21004, environment: "Production")))
    #expect(result.reason == "verify_receipt_21004")
  }

  @Test(arguments: [21000, 21008])
  func aProductionURLThatIsNotProductionsIsMisconfigured(status: Int) async {
    let result = await verify { _ in ScriptedTransport.appleAnswer(status: status) }
    #expect(
      result
        == .misconfigured(
          Misconfiguration(setting: .verifyReceiptURL, status: status, environment: "Production")))
  }

  @Test func aSandboxURLThatAnswersLikeProductionIsMisconfigured() async {
    let result = await verify { _ in ScriptedTransport.appleAnswer(status: 21007) }
    #expect(
      result
        == .misconfigured(
          Misconfiguration(
            setting: .verifyReceiptSandboxURL, status: 21007, environment: "Sandbox")))
  }

  @Test func aWrongSecretAtTheSandboxNamesTheSandbox() async {
    let result = await verify { url in
      ScriptedTransport.appleAnswer(status: url == Self.production ? 21007 : 21004)
    }
    #expect(
      result
        == .misconfigured(
          Misconfiguration(setting: .sharedSecret, status: 21004, environment: "Sandbox")))
  }
}
