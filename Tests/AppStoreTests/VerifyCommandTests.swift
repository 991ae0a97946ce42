import AppStore
import FakeAppStore
import Foundation
import JOSE
import Testing

@Suite final class VerifyCommandTests {
  let directory: URL
  let rootFile: String
  let authority: FakeCertificateAuthority

  init() throws {
    directory = try Subprocess.temporaryDirectory()
    authority = try FakeCertificateAuthority()
    rootFile = directory.appendingPathComponent("root.pem").path
    try Data(authority.rootCertificatePEM.utf8).write(to: URL(fileURLWithPath: rootFile))
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  func file(_ token: String) throws -> String {
    let path = directory.appendingPathComponent("\(UUID().uuidString).jws").path
    try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func printsAFakeSignedTransactionAndSucceeds() throws {
    let path = try file(try authority.sign(Fixtures.transaction()))
    #expect(
      VerifyCommand.run(["verify", "--bundle-id", Fixtures.bundleId, "--root", rootFile, path]) == 0
    )
  }

  @Test func refusesATamperedTokenWithExitCodeOne() throws {
    var tampered = Fixtures.transaction()
    tampered.quantity = 99
    let token = try authority.sign(Fixtures.transaction())
      .replacingSegment(1, with: Base64URL.encode(try Fixtures.json(tampered)))
    #expect(
      VerifyCommand.run(["--bundle-id", Fixtures.bundleId, "--root", rootFile, try file(token)])
        == 1)
  }

  @Test func honoursTheEnvironmentOption() throws {
    let path = try file(try authority.sign(Fixtures.transaction(environment: "Sandbox")))
    let arguments = ["--bundle-id", Fixtures.bundleId, "--root", rootFile]
    #expect(VerifyCommand.run(arguments + ["--environment", "Production", path]) == 1)
    #expect(VerifyCommand.run(arguments + ["--environment", "Sandbox", path]) == 0)
  }

  @Test func verifiesNotificationsAndRenewalInfoToo() throws {
    let renewal = JWSRenewalInfoDecodedPayload(
      originalTransactionId: "1", autoRenewStatus: 1, signedDate: Fixtures.nowMilliseconds,
      environment: "Sandbox")
    let notification = ResponseBodyV2DecodedPayload(
      notificationType: "TEST", notificationUUID: "u", signedDate: Fixtures.nowMilliseconds,
      data: NotificationData(bundleId: Fixtures.bundleId, environment: "Sandbox"))
    for token in [try authority.sign(renewal), try authority.sign(notification)] {
      #expect(
        VerifyCommand.run(["--bundle-id", Fixtures.bundleId, "--root", rootFile, try file(token)])
          == 0)
    }
  }

  @Test func reportsUsageErrorsWithExitCodeTwo() throws {
    let path = try file(try authority.sign(Fixtures.transaction()))
    #expect(VerifyCommand.run([path]) == 2)
    #expect(VerifyCommand.run(["--bundle-id", Fixtures.bundleId]) == 2)
    #expect(
      VerifyCommand.run(["--bundle-id", Fixtures.bundleId, "--environment", "Xcode", path]) == 2)
    #expect(
      VerifyCommand.run(["--bundle-id", Fixtures.bundleId, "--root", "/nonexistent.pem", path]) == 2
    )
    #expect(
      VerifyCommand.run([
        "--bundle-id", Fixtures.bundleId, directory.appendingPathComponent("missing").path,
      ]) == 2)
  }
}
