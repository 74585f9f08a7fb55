import Foundation
import Testing
@testable import TripStoreCLI

/// The manual page is made from the command table, and the checked-in
/// `docs/tripstore.1` is what the program makes (`tripstore help --man`).
@Suite struct CLIManualPageTests {
    @Test func theCheckedInManualPageIsTheGeneratedOne() throws {
        let generated = CLIRunner.run(["help", "--man"])
        #expect(generated.code == 0)
        let file = try String(contentsOfFile: CLIRunner.projectRoot + "/docs/tripstore.1", encoding: .utf8)
        #expect(file == generated.out, "docs/tripstore.1 is out of date: run 'tripstore help --man > docs/tripstore.1'")
    }

    @Test func everyCommandAndOptionIsInTheManualPage() {
        let page = ManualPage.text
        for (spec, _) in Commands.all {
            #expect(page.contains(".SS \(spec.name)\n"), "\(spec.name)")
            for option in Array(spec.valueOptions.keys) + Array(spec.flagOptions.keys) {
                #expect(page.contains(ManualPage.escaped("--" + option)), "\(spec.name) --\(option)")
            }
        }
        for (code, _) in ManualPage.exitCodes { #expect(page.contains(".B \(code)\n")) }
        for (name, _) in ManualPage.environment { #expect(page.contains(ManualPage.escaped(name))) }
    }

    @Test func groffRendersItWithoutWarnings() throws {
        let groff = "/usr/bin/groff"
        guard FileManager.default.isExecutableFile(atPath: groff) else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: groff)
        p.arguments = ["-ww", "-man", "-Tutf8", CLIRunner.projectRoot + "/docs/tripstore.1"]
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let warnings = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0 && warnings.isEmpty, "\(warnings)")
    }
}
