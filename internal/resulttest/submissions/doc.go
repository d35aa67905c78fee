// Package submissions builds git repositories of submitted result folders
// (approved, tampered, hostile, legacy) for the tests of the site, the
// manifest and the commands. It is apart from resulttest, which makes the
// folders, so that a test that needs only a folder does not link go-git.
package submissions
