fn main() -> std::process::ExitCode {
    eprintln!("kobo: the command line arrives with the platform issue");
    std::process::ExitCode::FAILURE
}
