/* ladder PIDFILE: a line of three processes that grows back what is killed of it, for the
   reaper's tests. Each link asks to be told of its parent's death (PR_SET_PDEATHSIG,
   SIGUSR1); a link so told passes SIGUSR2 down the line, and the bottom link, told so, forks
   a new bottom. Killing one link at a time (the top, then the next top...) never reaches the
   end of the line; a line whose links are all stopped first cannot answer. Every link
   appends its process id to PIDFILE and ignores SIGTERM; each ends within a minute. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t parent_gone, grow;

static void on_signal(int number) {
  if (number == SIGUSR1) parent_gone = 1; else grow = 1;
}

static void note(const char *path) {
  FILE *file = fopen(path, "a");
  if (file) {
    fprintf(file, "%d\n", (int)getpid());
    fclose(file);
  }
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  sigaction(SIGUSR1, &action, NULL);
  sigaction(SIGUSR2, &action, NULL);
  signal(SIGTERM, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  note(argv[1]);
  int below = 2; /* links still to make below this one */
  pid_t child = 0;
  time_t end = time(NULL) + 60;
  while (time(NULL) < end) {
    if ((below > 0 || grow) && child == 0) {
      grow = 0;
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGUSR1);
        note(argv[1]);
        below = below > 0 ? below - 1 : 0;
        continue;
      }
      if (pid > 0) child = pid;
      below = 0;
    }
    if (parent_gone || grow) {
      parent_gone = 0;
      if (child != 0) {
        grow = 0;
        kill(child, SIGUSR2); /* down the line: the bottom grows */
      } else {
        grow = 1;
      }
    }
    usleep(500);
  }
  return 0;
}
