import Testing

@testable import FakeAppStore

@Suite struct FakeAppStoreArgumentsTests {
  static let required = ["--port", "0", "--root-cert-out", "/tmp/root.pem"]

  @Test func theRetryScheduleDefaultsToApplesHours() throws {
    let options = try FakeAppStoreArguments(Self.required)
    #expect(
      options.configuration.retrySchedule == [1, 12, 24, 48, 72].map { .seconds($0 * 3600) })
  }

  @Test(arguments: [
    ("1,12,24", [Duration.seconds(1), .seconds(12), .seconds(24)]),
    ("0.25", [Duration.milliseconds(250)]),
    ("none", []),
  ])
  func acceptsDelaysInSecondsOrNone(text: String, expected: [Duration]) throws {
    let options = try FakeAppStoreArguments(Self.required + ["--retry-schedule", text])
    #expect(options.configuration.retrySchedule == expected)
  }

  @Test(arguments: ["", "1,,2", "-1", "soon", "nan", "1,2,3,4,5,6,7,8,9,10,11", "604801"])
  func refusesAnythingElse(text: String) {
    #expect(throws: FakeAppStoreArgumentError.self) {
      try FakeAppStoreArguments(Self.required + ["--retry-schedule=\(text)"])
    }
  }
}
