// The Go partner story of .ci/clients. The client is what openapi-generator's `-g go` writes with
// its defaults (module github.com/GIT_USER_ID/GIT_REPO_ID, package openapi), into the gitignored
// generated/kobo; .ci/clients regenerates it on every run.
module kobo-story-go

go 1.19

require github.com/GIT_USER_ID/GIT_REPO_ID v0.0.0

replace github.com/GIT_USER_ID/GIT_REPO_ID => ./generated/kobo
