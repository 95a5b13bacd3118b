import type { Tool } from "../types.js";
import { askUserTool } from "./ask-user.js";
import { editFileTool } from "./edit-file.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { listDirectoryTool } from "./list-directory.js";
import { readFileTool } from "./read-file.js";
import { runCommandTool } from "./run-command.js";
import { todoWriteTool } from "./todo-write.js";
import { writeFileTool } from "./write-file.js";
import { exitPlanModeTool } from "./exit-plan-mode.js";
import { updateGoalTool } from "./update-goal.js";
import { multiEditTool } from "./multi-edit.js";
import { webFetchTool } from "./web-fetch.js";
import { commandKillTool, commandOutputTool, commandWaitTool } from "./command-jobs.js";
import { taskTool } from "./task.js";
import { skillTool } from "./skill.js";

/** The order is part of every request's cached prefix: never reorder, only append. */
export function builtinTools(): Tool[] {
  return [
    readFileTool,
    listDirectoryTool,
    globTool,
    grepTool,
    writeFileTool,
    editFileTool,
    runCommandTool,
    todoWriteTool,
    askUserTool,
    exitPlanModeTool,
    updateGoalTool,
    multiEditTool,
    webFetchTool,
    commandOutputTool,
    commandWaitTool,
    commandKillTool,
    taskTool,
    skillTool,
  ];
}
