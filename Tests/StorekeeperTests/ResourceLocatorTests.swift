import Foundation
import Testing

@testable import Storekeeper

@Suite struct ResourceLocatorTests {
  func locator(_ existing: Set<String>, executableDirectory: String? = "/opt/sk-1.0/bin")
    -> ResourceLocator
  {
    ResourceLocator(executableDirectory: executableDirectory, exists: { existing.contains($0) })
  }

  @Test func searchesBesideTheBinaryThenShareThenUsrShareThenTheWorkingDirectory() {
    #expect(
      locator([]).candidates("Migrations") == [
        "/opt/sk-1.0/bin/Migrations", "/opt/sk-1.0/share/storekeeper/Migrations",
        "/usr/share/storekeeper/Migrations", "Migrations",
      ])
  }

  @Test func takesTheFirstThatExists() {
    let all: Set = [
      "/opt/sk-1.0/bin/Console", "/opt/sk-1.0/share/storekeeper/Console",
      "/usr/share/storekeeper/Console",
    ]
    #expect(locator(all).locate("Console") == "/opt/sk-1.0/bin/Console")
    #expect(
      locator(all.subtracting(["/opt/sk-1.0/bin/Console"])).locate("Console")
        == "/opt/sk-1.0/share/storekeeper/Console")
    #expect(
      locator(["/usr/share/storekeeper/openapi.yaml"]).locate("openapi.yaml")
        == "/usr/share/storekeeper/openapi.yaml")
  }

  @Test func keepsTheRelativeNameWhenNothingExists() {
    #expect(locator([]).locate("openapi.yaml") == "openapi.yaml")
    #expect(
      locator([], executableDirectory: nil).candidates("Console") == [
        "/usr/share/storekeeper/Console", "Console",
      ])
  }

  @Test func aBinaryInTheRootDirectoryLooksInShare() {
    #expect(
      locator([], executableDirectory: "/").candidates("Console")[1] == "/share/storekeeper/Console"
    )
  }

  @Test func theVariablesStillWin() throws {
    // A migrations directory named must hold migrations (checked at start-up); the others are
    // read later.
    let migrations = FileManager.default.temporaryDirectory
      .appendingPathComponent("locator-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: migrations, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: migrations) }
    #expect(
      FileManager.default.createFile(atPath: migrations + "/0001_first.sql", contents: Data()))
    let config = try AppConfig.fromEnvironment([
      "DATABASE_URL": "postgresql://u@127.0.0.1:5432/db", "APPLE_BUNDLE_ID": "com.example.app",
      "APP_AUTH": "none", "APPLE_APP_APPLE_ID": "1234567890", "MIGRATIONS_DIR": migrations,
      "OPENAPI_PATH": "/o.yaml", "CONSOLE_DIR": "/c",
    ])
    #expect(config.migrationsDirectory == migrations)
    #expect(config.openAPIPath == "/o.yaml")
    #expect(config.consoleDirectory == "/c")
  }

  @Test func theRunningTestBinaryIsFound() {
    #expect(ResourceLocator.runningExecutableDirectory()?.hasPrefix("/") == true)
  }
}
