import FakeAppStore
import Foundation

// Dispatch only. Apple's stand-in for tests and the demo is a binary of its own so that the
// shipped `storekeeper` links neither it nor its certificate authority.
exit(await FakeAppStoreCommand.run(Array(CommandLine.arguments.dropFirst())))
