import AppStore
import Foundation
import Storekeeper

// Dispatch only: every command lives in a library module.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch arguments.first {
case "serve": status = await Commands.serve(Array(arguments.dropFirst()))
case "migrate": status = await Commands.migrate()
case "seed-demo": status = await Commands.seedDemo()
case "reconcile": status = await Commands.reconcile(Array(arguments.dropFirst()))
case "charts-backfill": status = await Commands.chartsBackfill(Array(arguments.dropFirst()))
case "export": status = await Commands.export(Array(arguments.dropFirst()))
case "verify": status = VerifyCommand.run(Array(arguments.dropFirst()))
case "--version", "version":
  print(Commands.version)
  status = 0
case "help", "--help", "-h":
  print(Commands.usage)
  status = 0
default:
  FileHandle.standardError.write(Data((Commands.usage + "\n").utf8))
  status = 2
}
exit(status)
