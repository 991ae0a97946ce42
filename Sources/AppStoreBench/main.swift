import AppStore
import FakeAppStore
import Foundation

// Measures single-thread JWS verification throughput with the chain cached, for bench/verify.
// `appstore-bench verify …` runs the support tool instead (handy without the main executable).

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "verify" {
  exit(VerifyCommand.run(arguments))
}
let iterations = arguments.first.flatMap(Int.init) ?? 20_000

do {
  let authority = try FakeCertificateAuthority()
  var configuration = AppStoreConfiguration(bundleId: "com.example.bench")
  configuration.extraRootCertificatesPEM = [authority.rootCertificatePEM]
  let verifier = try SignedDataVerifier(configuration: configuration)
  let now = Int64(Date().timeIntervalSince1970 * 1000)
  let token = try authority.sign(
    JWSTransactionDecodedPayload(
      transactionId: "2000000000000001", originalTransactionId: "2000000000000001",
      bundleId: "com.example.bench", productId: "gold.100", purchaseDate: now, quantity: 1,
      type: "Consumable", inAppOwnershipType: "PURCHASED", signedDate: now,
      environment: "Production"))
  guard case .valid = verifier.verifyTransaction(token) else {
    print("bench token did not verify")
    exit(1)
  }
  let clock = ContinuousClock()
  var accepted = 0
  let elapsed = clock.measure {
    for _ in 0..<iterations {
      if case .valid = verifier.verifyTransaction(token) { accepted += 1 }
    }
  }
  let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  guard accepted == iterations else {
    print("only \(accepted) of \(iterations) verified")
    exit(1)
  }
  print("iterations: \(iterations)")
  print(String(format: "verifications/s: %.0f", Double(iterations) / seconds))
} catch {
  print("bench failed: \(error)")
  exit(1)
}
