import Foundation

extension VerifyCommand {
  struct UsageError: Error, CustomStringConvertible {
    var description: String
  }

  struct Options {
    var bundleId: String?
    var environments: Set<String> = []
    var rootFiles: [String] = []
    var appAppleId: Int64?
    var input: String?

    init(parsing arguments: [String]) throws {
      var remaining = arguments[...]
      func value(for flag: String) throws -> String {
        guard let next = remaining.popFirst() else {
          throw UsageError(description: "\(flag) needs a value")
        }
        return next
      }
      while let argument = remaining.popFirst() {
        switch argument {
        case "--bundle-id": bundleId = try value(for: argument)
        case "--environment":
          let name = try value(for: argument)
          guard name == "Production" || name == "Sandbox" else {
            throw UsageError(description: "--environment must be Production or Sandbox")
          }
          environments.insert(name)
        case "--root": rootFiles.append(try value(for: argument))
        case "--app-apple-id":
          guard let id = Int64(try value(for: argument)) else {
            throw UsageError(description: "--app-apple-id must be a number")
          }
          appAppleId = id
        case "-h", "--help": throw UsageError(description: "help")
        default:
          guard input == nil, argument == "-" || !argument.hasPrefix("-") else {
            throw UsageError(description: "unexpected argument \(argument)")
          }
          input = argument
        }
      }
      guard bundleId != nil else { throw UsageError(description: "--bundle-id is required") }
      guard input != nil else { throw UsageError(description: "a FILE or - is required") }
    }

    func configuration() throws -> AppStoreConfiguration {
      var configuration = AppStoreConfiguration(bundleId: bundleId ?? "")
      configuration.allowedEnvironments =
        environments.isEmpty ? ["Production", "Sandbox"] : environments
      configuration.appAppleId = appAppleId
      configuration.extraRootCertificatesPEM = try rootFiles.map { path in
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
          throw UsageError(description: "cannot read root certificate \(path)")
        }
        return text
      }
      return configuration
    }

    /// The input's bytes as read: a JWS or base64 receipt as text, or a receipt's DER.
    func readInput() throws -> [UInt8] {
      let data: Data?
      if input == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
      } else {
        data = input.flatMap { FileManager.default.contents(atPath: $0) }
      }
      guard let data else { throw UsageError(description: "cannot read \(input ?? "-")") }
      return [UInt8](data)
    }
  }
}
