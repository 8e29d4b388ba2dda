/* Record/replay test: the environment and the working directory of the recorded run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *token = getenv("RR_TOKEN");
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "?");
    long token_len = token ? (long)strlen(token) : -1;
    long cwd_len = (long)strlen(cwd);
    printf("token=%s\n", token ? token : "(unset)");
    printf("cwd=%s\n", cwd);
    printf("token_len=%ld\n", token_len); /* BREAK-HERE */
    printf("cwd_len=%ld\n", cwd_len);
    return 0;
}
